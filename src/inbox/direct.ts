/**
 * Direct mode of the database inbox: the receiver inserts the delivery's row, then runs its handlers
 * in the request, inside the app's transaction, where the row's claim and its move to `handled` commit
 * with the handlers' writes; the answer is the run's verdict. Same table, same run (run-row.ts), same
 * verdict-to-action mapping (`jobAction`) as the inbox worker.
 */

import type { HandlerContext } from '../core/handler-types.js';
import { accepted, failed, type Verdict } from '../core/verdict.js';
import type { HandoffTarget } from '../handoff/job/types.js';
import type { DeliveryInbox, InboxReceipt, InboxRequestRunner } from '../receiver/inbox-receipt.js';
import { WebhookError } from '../shared/errors.js';
import { afterBusy, knownAnswer, recordFailure } from './direct-answer.js';
import { directClaimStatement, directSupersedeStatement } from './direct-sql.js';
import { type Inbox, queueOf } from './inbox.js';
import { openTransaction, type RowRun, runRow } from './run-row.js';
import type { InboxTransactions } from './transactions.js';

/**
 * Options of {@link createDirectInbox}.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 *
 * declare const pool: pg.Pool;
 * const options: DirectInboxOptions<pg.PoolClient> = { inbox, transactions: pgTransactions(pool), timeoutMs: 8_000 };
 * ```
 */
export interface DirectInboxOptions<Tx = unknown> {
  /** The inbox whose table holds the rows (`createPostgresInbox`, `createSqliteInbox`). */
  inbox: Inbox;
  /** The app's transactions: handlers get `context.tx`; the row's claim and completion commit in it. */
  transactions: InboxTransactions<Tx>;
  /**
   * Handler budget in ms, counted from the delivery's arrival at the inbox: then the answer is 503
   * `handler_timeout` (the services wait 10 s). Default 8 000; it must stay below the receiver's
   * `leaseMs`.
   */
  timeoutMs?: number;
  /** Runs of a row before it is `dead` (then answered 200: the service's retries cannot fix it). Default 10. */
  maxAttempts?: number;
}

/**
 * The inbox in direct mode: a receiver's `handoff`, and `tx(context)`, the handlers' transaction typed
 * as its adapter gives it.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 *
 * declare const pool: pg.Pool;
 * const direct: DirectInbox<pg.PoolClient> = createDirectInbox({ inbox, transactions: pgTransactions(pool) });
 * ```
 */
export interface DirectInbox<Tx = unknown> extends HandoffTarget {
  /**
   * In a handler, the open transaction it runs in (`context.tx`), typed as the `transactions` adapter
   * gives it. Throws `options_invalid` for a context that is not of a handler running in a
   * transaction of this adapter (the receiver runs the delivery without this inbox, the handler
   * returned).
   */
  tx(context: HandlerContext): Tx;
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new WebhookError(
      'options_invalid',
      `createDirectInbox: \`${name}\` must be a positive whole number.`,
    );
  return value;
}

/**
 * The inbox in direct mode (docs/inbox-direct.md "Direct mode"): give it to a receiver as `handoff`. Each
 * delivery's row is inserted, then its handlers run in your transaction before the answer: 200 once
 * their writes and the row's move to `handled` committed together; on a failure both roll back, the
 * row is left `failed` with the error and the answer is the failure's status (500, 503) so the service
 * retries, and its retry runs the row again. An event older than one of its ordering key already
 * handled is `superseded` and answered 200 without running. Quarantine is as in inbox mode.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { createCrmReceiver } from '@svc/webhooks';
 * import { createDirectInbox, createPostgresInbox, pgTransactions } from '@svc/webhooks/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const inbox = createPostgresInbox({ client: pool });
 * await inbox.migrate();
 * const direct = createDirectInbox({ inbox, transactions: pgTransactions(pool) });
 * const receiver = createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET!, handoff: direct });
 * receiver.on('deal.won', async (event, context) => {
 *   const tx = direct.tx(context); // the pg.PoolClient of the request's open transaction
 *   await tx.query('INSERT INTO won_deals (deal_id) VALUES ($1)', [event.data.deal_id]);
 * });
 * ```
 */
export function createDirectInbox<Tx>(options: DirectInboxOptions<Tx>): DirectInbox<Tx> {
  const { inbox, transactions, timeoutMs = 8_000, maxAttempts = 10 } = options;
  if (typeof transactions?.transaction !== 'function')
    throw new WebhookError(
      'options_invalid',
      'createDirectInbox: `transactions` must be a transaction adapter (pgTransactions, sqliteTransactions, your own).',
    );
  const queue = queueOf(inbox);
  positive('timeoutMs', timeoutMs);
  positive('maxAttempts', maxAttempts);
  // Nothing aborts a run in the request but its deadline.
  const signal = new AbortController().signal;

  async function runInRequest(receipt: InboxReceipt, runner: InboxRequestRunner): Promise<Verdict> {
    const startedAt = queue.clock.now();
    const job = {
      deliveryId: receipt.event.deliveryId,
      event: receipt.event.name,
      dedupKey: receipt.dedupKey,
    };
    const facts = { deliveryId: job.deliveryId, event: job.event };
    const row = await queue.admit(receipt, runner.leaseMs);
    const answer = knownAnswer(queue, row, runner, job);
    if (answer) return answer;
    const id = Number(row.id);
    const fence = Number(row.fence);
    const attempt = Number(row.attempts) + 1;
    const budget = Math.min(timeoutMs - (queue.clock.now() - startedAt), runner.leaseMs - 1);
    if (budget < 1) {
      const timeout = new WebhookError(
        'handler_timeout',
        `The inbox insert took the whole ${timeoutMs} ms budget.`,
      );
      return failed(runner.service, 'handler_timeout', timeout, facts);
    }
    let claimed = true;
    return new Promise<Verdict>((resolve) => {
      let answered = false;
      const reply = (verdict: Verdict): void => {
        if (answered) return;
        answered = true;
        resolve(verdict);
      };
      const run: RowRun = {
        id,
        fence: fence + 1,
        attempt,
        leaseMs: runner.leaseMs,
        execute: runner.run,
        signal,
        timeoutMs: budget,
        extendLease: false,
        begin: async (execute) => {
          const target = {
            table: queue.table,
            dialect: queue.db.dialect,
            stale: queue.statements.stale,
            id,
            fence,
            now: queue.clock.now(),
          };
          // The claim carries the stale guard: a row that runs costs this one statement.
          if ((await execute(directClaimStatement(target, runner.leaseMs))) === 1) return undefined;
          // An event older than one of its key already handled never runs.
          if ((await execute(directSupersedeStatement(target))) === 1)
            return accepted('ignored', runner.service, job.deliveryId, job.event);
          claimed = false;
          return failed(runner.service, 'delivery_in_progress', undefined, facts, 1_000);
        },
        // At the deadline the sender gets 503 now; the transaction waits for the handlers.
        onVerdict: (verdict) => {
          if (verdict.kind === 'failed' && verdict.code === 'handler_timeout') reply(verdict);
        },
      };
      runRow(queue, transactions, run)
        .then(async ({ verdict, completed }) => {
          if (!completed)
            reply(await recordFailure(queue, maxAttempts, runner, job, { id, fence, attempt }, verdict));
          else if (claimed) reply(verdict);
          else reply(await afterBusy(queue, job, runner, verdict));
        })
        .catch((error: unknown) => {
          // The database failed the transaction: nothing of the run committed, and the retry runs it.
          runner.reportJobError(error, {
            deliveryId: job.deliveryId,
            dedupKey: job.dedupKey,
            message: 'inbox direct run failed; the retry runs it again',
          });
          reply(failed(runner.service, 'store_unavailable', error, facts));
        });
    });
  }

  const direct: DirectInbox<Tx> & DeliveryInbox = {
    enqueue: (job, enqueueOptions) => inbox.enqueue(job, enqueueOptions),
    // A delivery that failed the schema is quarantined as in inbox mode.
    storeDelivery: (receipt) => (inbox as Inbox & DeliveryInbox).storeDelivery(receipt),
    countDrift: (service, event, paths, timeoutMs) =>
      (inbox as Inbox & DeliveryInbox).countDrift!(service, event, paths, timeoutMs),
    runInRequest,
    tx: (context) => openTransaction(transactions, context, 'direct inbox'),
  };
  return direct;
}
