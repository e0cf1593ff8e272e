/**
 * The inbox worker: claims rows of the inbox table (a lease and a fencing token per claim), runs each
 * through `receiver.runJob` (which verifies the row's stored signature again and parses its bytes
 * once) with the row as the claim and, with a transaction adapter, inside the
 * app's transaction where the row's move to `handled` commits with the handlers' writes. Each verdict
 * becomes a row update through the one hand-off mapping, `jobAction`.
 */

import type { HandlerContext } from '../core/handler-types.js';
import type { HandoffRunner } from '../handoff/job/types.js';
import { type JobAction, jobAction, jobActionOfError } from '../handoff/job-action.js';
import type { RowRunOptions } from '../receiver/inbox-runs.js';
import { isWebhookError, WebhookError } from '../shared/errors.js';
import type { DbRow } from './db.js';
import { type Inbox, queueOf } from './inbox.js';
import { storedOf } from './rows.js';
import { openTransaction, runRow } from './run-row.js';
import type { InboxTransactions } from './transactions.js';

/**
 * A dedicated, connected `pg.Client` the worker LISTENs on, to run a row as soon as it is inserted
 * rather than at the next poll.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 *
 * const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
 * await client.connect();
 * const listen: InboxListener = client;
 * ```
 */
export interface InboxListener {
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: (message: unknown) => void): unknown;
}

/**
 * Options of {@link createInboxWorker}.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 *
 * declare const pool: pg.Pool;
 * const options: InboxWorkerOptions<pg.PoolClient> = { receiver, inbox, transactions: pgTransactions(pool), concurrency: 4 };
 * ```
 */
export interface InboxWorkerOptions<Tx = unknown> {
  /** The receiver whose `.on(...)` handlers run the rows (the same one that writes them, or one like it). */
  receiver: HandoffRunner;
  inbox: Inbox;
  /**
   * The app's transactions: handlers get `context.tx` and the row's move to `handled` commits with
   * their writes (exactly-once effects). Without it, the row is completed after the handlers, as a
   * dedup store is: handlers run at least once and completion is recorded once.
   */
  transactions?: InboxTransactions<Tx>;
  /** Rows run at once in this process. Default 1 (with a SQLite transaction adapter, always 1). */
  concurrency?: number;
  /** Runs of a row before it is `dead`. Default 10. */
  maxAttempts?: number;
  /** Delay before run `attempt + 1` after run `attempt` failed, in ms. Default 1 s doubling, at most 5 min. */
  backoffMs?: (attempt: number) => number;
  /** A claim's lease, in ms: past it a row whose worker died runs again. Default 30 000. */
  leaseMs?: number;
  /** How often to look for rows when nothing woke the worker, in ms. Default 1 000. */
  pollMs?: number;
  /** PostgreSQL: a dedicated client to LISTEN on, so a new row runs at once. */
  listen?: InboxListener;
  /** How long `stop()` waits for running rows before aborting them, in ms. Default 10 000. */
  shutdownMs?: number;
}

/**
 * A running inbox worker; `Tx` is the transaction type of its `transactions` adapter.
 *
 * @example
 * ```ts
 * const worker = createInboxWorker({ receiver, inbox });
 * worker.start();
 * process.once('SIGTERM', () => void worker.stop());
 * ```
 */
export interface InboxWorker<Tx = unknown> {
  /** Starts claiming and running rows in the background. */
  start(): void;
  /** Stops claiming, waits for running rows (then aborts them, and their rows run again later). */
  stop(): Promise<void>;
  /** Claims and runs the rows due now, once; resolves how many ran. For tests and cron-style use. */
  runOnce(): Promise<number>;
  /**
   * In a handler, the open transaction it runs in (`context.tx`), typed as the worker's
   * `transactions` adapter gives it: a `pg.PoolClient` for `pgTransactions(pool)`, the database for
   * `sqliteTransactions(db)`, the ORM's transaction for an adapter of your own. Throws
   * `options_invalid` for a context that is not of a handler running in a transaction of this
   * adapter (the worker has none, the receiver runs the delivery itself, the handler returned).
   */
  tx(context: HandlerContext): Tx;
}

/** A boolean column as each driver returns it: `true` (PostgreSQL) or `1` (SQLite). */
const isTrue = (value: unknown): boolean => value === true || value === 1 || value === 1n;

const defaultBackoff = (attempt: number) => Math.min(1_000 * 2 ** (attempt - 1), 300_000);

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new WebhookError(
      'options_invalid',
      `createInboxWorker: \`${name}\` must be a positive whole number.`,
    );
  return value;
}

/**
 * Runs an inbox's rows with a receiver's handlers (docs/inbox.md): in the receiving process by
 * default, or in processes of their own for scale (each with its own receiver and inbox on the same
 * table). Rows of one ordering key run one at a time, oldest event first; an event older than one of
 * its key already handled is `superseded` and never runs.
 *
 * @example
 * ```ts
 * import { createInboxWorker, pgTransactions } from '@svc/webhooks/postgres';
 *
 * const worker = createInboxWorker({ receiver, inbox, transactions: pgTransactions(pool), concurrency: 4 });
 * worker.start();
 * ```
 */
export function createInboxWorker<Tx = never>(options: InboxWorkerOptions<Tx>): InboxWorker<Tx> {
  const {
    receiver,
    inbox,
    transactions,
    maxAttempts = 10,
    backoffMs = defaultBackoff,
    leaseMs = 30_000,
    pollMs = 1_000,
    listen,
    shutdownMs = 10_000,
  } = options;
  if (typeof receiver?.runJob !== 'function')
    throw new WebhookError(
      'options_invalid',
      'createInboxWorker: `receiver` must be a receiver (it has runJob).',
    );
  const queue = queueOf(inbox);
  const concurrency = transactions?.locksDatabase ? 1 : positive('concurrency', options.concurrency ?? 1);
  positive('maxAttempts', maxAttempts);
  positive('leaseMs', leaseMs);
  positive('pollMs', pollMs);
  // The app's transaction holds SQLite's write lock: a lease extension from the inbox's connection
  // would wait for it, and no other worker can take the row meanwhile anyway.
  const extendLease = !(transactions?.locksDatabase && queue.db.dialect === 'sqlite');
  const running = new Set<Promise<void>>();
  const controller = new AbortController();
  let started = false;
  let stopping = false;
  let wake: (() => void) | undefined;
  /** A wake-up that came while the loop was not waiting (a NOTIFY during a claim). */
  let woken = false;
  let loop: Promise<void> | undefined;

  function report(error: unknown, row: DbRow | undefined, message: string, deadLetter = false): void {
    receiver.reportJobError(error, {
      deliveryId: row ? String(row.delivery_id) : undefined,
      dedupKey: row ? String(row.dedup_key) : undefined,
      message,
      deadLetter,
    });
  }

  async function runOne(row: DbRow): Promise<void> {
    const id = Number(row.id);
    const fence = Number(row.fence);
    const attempt = Number(row.attempts);
    let action: JobAction;
    try {
      // The claim read the stale guard (`stale`); only a stale row costs the `supersede` statement.
      if (isTrue(row.stale) && (await queue.supersede(id, fence))) return;
      const stored = storedOf(row);
      const execute = (options: RowRunOptions) => receiver.runJob(stored, options);
      const { leaseMs: heldMs } = receiver;
      const run = { id, fence, attempt, leaseMs: heldMs, execute, signal: controller.signal, extendLease };
      const { verdict, completed } = await runRow(queue, transactions, run);
      // Handled, or a handled verdict whose completion was fenced off: another run owns the row now.
      if (completed) return;
      action = jobAction(verdict, { attempt, maxAttempts, shuttingDown: stopping });
    } catch (error) {
      // A malformed row (storedOf: `job_invalid`) is dead at once: no retry makes it readable.
      action =
        isWebhookError(error) && error.code === 'job_invalid'
          ? { type: 'dead-letter', error, exhausted: false, reported: false }
          : jobActionOfError(error, { attempt, maxAttempts });
    }
    await settle(row, id, fence, action);
  }

  async function settle(row: DbRow, id: number, fence: number, action: JobAction): Promise<void> {
    if (action.type === 'done') return;
    const { error } = action;
    const dead = action.type === 'dead-letter';
    const now = queue.clock.now();
    const runAt = action.type === 'delay' ? now + action.ms : now + backoffMs(Number(row.attempts));
    try {
      await queue.settle(id, fence, {
        status: dead ? 'dead' : 'failed',
        runAt,
        code: error.code,
        message: error.message,
        refund: action.type === 'delay',
      });
    } catch (settleError) {
      // The lease ends and the row runs again: nothing is lost.
      report(settleError, row, 'inbox row could not be updated after its run');
    }
    // A dead row is reported (and counted as a dead letter) even when runJob reported its failure.
    if (dead || !action.reported)
      report(error, row, dead ? 'inbox row dead' : 'inbox row failed; it will run again', dead);
  }

  async function claimAndRun(): Promise<number> {
    const free = concurrency - running.size;
    if (free <= 0) return 0;
    let rows: DbRow[];
    try {
      rows = await queue.claim(free, leaseMs, receiver.service);
    } catch (error) {
      report(error, undefined, 'inbox claim failed');
      return 0;
    }
    for (const row of rows) {
      const run = runOne(row).finally(() => {
        running.delete(run);
        wake?.();
      });
      running.add(run);
    }
    return rows.length;
  }

  async function background(): Promise<void> {
    while (!stopping) {
      const claimed = await claimAndRun();
      if (stopping) break;
      if ((claimed > 0 || woken) && running.size < concurrency) {
        woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  return {
    start() {
      if (started) return;
      started = true;
      if (listen) {
        listen.on('notification', () => {
          if (wake) wake();
          else woken = true;
        });
        listen.query(`LISTEN "${queue.channel}"`).catch((error: unknown) => {
          report(error, undefined, 'inbox LISTEN failed; polling only');
        });
      }
      loop = background();
    },

    async stop() {
      stopping = true;
      wake?.();
      await loop;
      const all = Promise.all(running);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, shutdownMs);
      });
      await Promise.race([all, late]);
      clearTimeout(timer);
      controller.abort(new WebhookError('handler_timeout', 'The inbox worker is stopping.'));
      await all;
    },

    async runOnce() {
      let total = 0;
      for (;;) {
        const claimed = await claimAndRun();
        total += claimed;
        await Promise.all(running);
        if (claimed === 0) return total;
      }
    },

    tx: (context) => openTransaction(transactions, context, 'inbox worker'),
  };
}
