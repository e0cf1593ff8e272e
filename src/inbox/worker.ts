/**
 * The inbox worker on the one worker loop of every engine (`handoff/worker-loop.ts`): `fetch` claims
 * rows of the inbox table (a lease and a fencing token per claim), `run` runs each through
 * `receiver.runJob` (which verifies the row's stored signature again and parses its bytes once) with
 * the row as the claim and, with a transaction adapter, inside the app's transaction where the row's
 * move to `handled` commits with the handlers' writes; `settle` is the row's update from `jobAction`;
 * a LISTEN notification wakes the loop. Polling, slots, reports and the shutdown are the loop's.
 */

import type { HandlerContext } from '../core/handler-types.js';
import { KEPT_AGAIN } from '../core/quarantine.js';
import { accepted, refused, type Verdict } from '../core/verdict.js';
import type { HandoffRunner, RunJobOptions } from '../handoff/job/types.js';
import type { JobAction } from '../handoff/job-action.js';
import type { LoopJob, Settled } from '../handoff/run-and-settle.js';
import { checkRunner, positiveInteger, positiveIntegers } from '../handoff/worker-checks.js';
import { createWorkerLoop } from '../handoff/worker-loop.js';
import type { RowRunOptions, StoredDelivery } from '../receiver/inbox-runs.js';
import type { WebhookError } from '../shared/errors.js';
import type { DbRow } from './db.js';
import { type Inbox, queueOf } from './inbox.js';
import { keptIssues } from './kept-issues.js';
import { storedOf } from './rows.js';
import { openTransaction, type RowRunResult, runRow } from './run-row.js';
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
  /**
   * How long `stop()` waits for running rows before aborting their handlers' signal, and then at
   * most as long again, in ms (a row still running then runs again once its lease ends). Default 10 000.
   */
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
  /**
   * Stops claiming, waits for running rows up to `shutdownMs`, then aborts their handlers' signal (a
   * failed run is put back without using an attempt) and waits at most `shutdownMs` again.
   */
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

const FACTORY = 'createInboxWorker';

/**
 * Rows a claim takes at most, beyond the free slots: the claim's window reads 16 keyed rows' turns
 * whatever its limit (claim-sql.ts), so one statement claiming up to 16 costs about what one claiming
 * a single row does, and the rows past the free slots wait here, each under its own lease and fence,
 * until a slot frees (docs/benchmarks.md, "The worker, claiming ahead").
 */
const CLAIM_AHEAD = 16;

/** A claimed row as the worker loop runs it. */
interface RowJob extends LoopJob {
  readonly row: DbRow;
  readonly id: number;
  readonly fence: number;
  /** Set by the run once the row left `processing` in it (handled, or superseded): nothing to settle. */
  closed: boolean;
  /** When the claim's lease ends (the clock's ms): a row claimed ahead has its lease extended before it runs. */
  leaseEndsAt: number;
}

/**
 * Runs an inbox's rows with a receiver's handlers (docs/inbox.md): in the receiving process by
 * default, or in processes of their own for scale (each with its own receiver and inbox on the same
 * table). Rows of one ordering key run one at a time, oldest event first; an event older than one of
 * its key already handled is `superseded` and never runs. The loop is the hand-off engines' one
 * (`handoff/worker-loop.ts`): the inbox gives it the claim, the run in a transaction, the row update.
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
    inbox,
    transactions,
    maxAttempts = 10,
    backoffMs = defaultBackoff,
    leaseMs = 30_000,
    pollMs = 1_000,
    listen,
    shutdownMs = 10_000,
  } = options;
  const receiver = checkRunner(FACTORY, options.receiver);
  const queue = queueOf(inbox);
  const concurrency = transactions?.locksDatabase
    ? 1
    : positiveInteger(FACTORY, 'concurrency', options.concurrency ?? 1);
  positiveIntegers(FACTORY, { maxAttempts, leaseMs, pollMs });
  // The app's transaction holds SQLite's write lock: a lease extension from the inbox's connection
  // would wait for it, and no other worker can take the row meanwhile anyway.
  const extendLease = !(transactions?.locksDatabase && queue.db.dialect === 'sqlite');
  // A transaction holding SQLite's write lock takes its turn at the file (write-turns.ts): the
  // inbox's own writes (receipts) go between two rows, and workers of one file (mail's, CRM's) take
  // turns, instead of blocking the event loop in SQLite's busy wait.
  const { turns } = queue;
  const inTurn =
    turns && transactions?.locksDatabase ? turns.transaction : (work: () => Promise<RowRunResult>) => work();

  const jobOf = (row: DbRow, leaseEndsAt: number): RowJob => ({
    row,
    leaseEndsAt,
    id: Number(row.id),
    fence: Number(row.fence),
    attempt: Number(row.attempts),
    maxAttempts,
    label: `inbox row ${String(row.id)}`,
    data: { deliveryId: String(row.delivery_id), dedupKey: String(row.dedup_key) },
    closed: false,
  });

  async function run(job: RowJob, runOptions: RunJobOptions): Promise<Verdict> {
    const { row, id, fence, attempt } = job;
    const { service } = receiver;
    // The claim read the stale guard (`stale`); only a stale row costs the `supersede` statement.
    if (isTrue(row.stale) && (await queue.supersede(id, fence))) {
      job.closed = true;
      return accepted('ignored', service, String(row.delivery_id), String(row.event));
    }
    let stored: StoredDelivery;
    try {
      stored = storedOf(row);
    } catch (error) {
      // A malformed row (`job_invalid`) is dead at once: no retry makes it readable.
      return refused(service, error as WebhookError);
    }
    const execute = (rowOptions: RowRunOptions) => receiver.runJob(stored, rowOptions);
    // The loop always passes its shutdown signal.
    const signal = runOptions.signal!;
    const run = { id, fence, attempt, leaseMs: receiver.leaseMs, execute, signal, extendLease };
    const { verdict, completed } = await inTurn(() => runRow(queue, transactions, run));
    // Handled (late handlers too), or fenced off: another run owns the row now.
    job.closed = completed;
    if (
      !completed &&
      (verdict.kind === 'refused' || verdict.kind === 'failed') &&
      KEPT_AGAIN.has(verdict.code)
    )
      return quarantineAgain(job, verdict.error as WebhookError);
    return verdict;
  }

  /**
   * An authentic row that still fails the schema or the app's repair: `quarantined` again with its
   * latest issues and its first ones (kept-issues.ts), reported once; never `dead`, never retried.
   */
  async function quarantineAgain(job: RowJob, error: WebhookError): Promise<Verdict> {
    const { row, id, fence } = job;
    const message = keptIssues(error.message, error.code, row.last_error_code, row.last_error_message);
    job.closed = await queue.quarantine(id, fence, error.code, message);
    const { deliveryId, dedupKey } = job.data as { deliveryId: string; dedupKey: string };
    receiver.reportJobError(error, {
      deliveryId,
      dedupKey,
      message: `inbox row ${id} still fails (${error.code}): quarantined again`,
    });
    return accepted('ignored', receiver.service, deliveryId, String(row.event));
  }

  async function settle(job: RowJob, action: JobAction): Promise<Settled> {
    if (job.closed || action.type === 'done') return 'done';
    const dead = action.type === 'dead-letter';
    const now = queue.clock.now();
    const held = await queue.settle(job.id, job.fence, {
      status: dead ? 'dead' : 'failed',
      runAt: action.type === 'delay' ? now + action.ms : now + backoffMs(job.attempt),
      code: action.error.code,
      message: action.error.message,
      refund: action.type === 'delay',
    });
    // A row whose fence moved on belongs to another run: it settles it.
    return dead && held ? 'dead-lettered' : 'retried';
  }

  /** Rows claimed and not yet run, in claim order (at most one per ordering key, as a claim takes them). */
  const ahead: RowJob[] = [];

  /**
   * Up to `max` claimed rows for the free slots: those claimed ahead first, then a claim of up to
   * {@link CLAIM_AHEAD} when fewer wait. A row claimed ahead whose lease is past its half gets it
   * extended before it runs (as a running row's is, `extend`); one whose fence moved on (its lease
   * ended and another worker claimed it) is dropped, never run.
   */
  async function takeAhead(max: number): Promise<RowJob[]> {
    // A turn of the event loop between claims: rows whose handlers never wait (or wait on
    // promises only) cannot run back to back for a whole backlog while requests wait unread.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const kept: RowJob[] = [];
    while (kept.length === 0) {
      if (ahead.length < max && !loop.stopping) {
        const leaseEndsAt = queue.clock.now() + leaseMs;
        const rows = await queue.claim(Math.max(max, CLAIM_AHEAD) - ahead.length, leaseMs, receiver.service);
        for (const row of rows) ahead.push(jobOf(row, leaseEndsAt));
      }
      if (ahead.length === 0 || loop.stopping) return kept;
      const now = queue.clock.now();
      for (const job of ahead.splice(0, max)) {
        if (job.leaseEndsAt - now > leaseMs / 2) kept.push(job);
        else if (await queue.extend(job.id, job.fence, leaseMs).catch(() => false)) {
          job.leaseEndsAt = now + leaseMs;
          kept.push(job);
        }
      }
    }
    return kept;
  }

  /** On stop: the rows claimed ahead go back as they were (their attempt refunded), for any worker. */
  async function releaseAhead(): Promise<void> {
    for (const job of ahead.splice(0)) {
      await queue.release(job.id, job.fence, job.row).catch((error: unknown) => {
        receiver.reportJobError(error, {
          message: `${job.label}: release on stop failed; it runs again once its lease ends`,
        });
      });
    }
  }

  const loop = createWorkerLoop<RowJob>({
    receiver,
    concurrency,
    shutdownTimeoutMs: shutdownMs,
    signals: [],
    pollMs,
    fetchName: 'inbox claim',
    fetch: (max) => takeAhead(max),
    run,
    settle,
    // Rows claimed ahead go back at once; any a claim still running brought go after the drain.
    stopClaiming: releaseAhead,
    afterStop: releaseAhead,
  });

  let started = false;
  return {
    start() {
      if (started) return;
      started = true;
      if (listen) {
        listen.on('notification', () => loop.wake());
        listen.query(`LISTEN "${queue.channel}"`).catch((error: unknown) => {
          receiver.reportJobError(error, { message: 'inbox LISTEN failed; polling only' });
        });
      }
      void loop.start();
    },
    stop: () => loop.stop(),
    runOnce: () => loop.runOnce(),
    tx: (context) => openTransaction(transactions, context, 'inbox worker'),
  };
}
