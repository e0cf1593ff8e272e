/**
 * One run of an inbox row, shared by the inbox worker and direct mode: the receiver's run (the stored
 * row through `receiver.runJob`, or the request's own parse) with the row as the claim ({@link rowClaim})
 * and, with a transaction adapter, inside the app's transaction, where the row's move to
 * `handled` commits with the handlers' writes. The transaction ends only once the handlers settled:
 * handlers still running at their deadline keep it (and the row) until they finish, then it commits if
 * they completed the row and rolls back otherwise, so a late write never commits outside it.
 */

import { transactionRunOf } from '../core/delivery/context.js';
import type { HandlerContext } from '../core/handler-types.js';
import type { Verdict } from '../core/verdict.js';
import type { AsyncHeld } from '../dedup/claims.js';
import type { RowRunOptions } from '../receiver/inbox-runs.js';
import { WebhookError } from '../shared/errors.js';
import type { InboxQueue } from './inbox.js';
import type { InboxTransactions } from './transactions.js';

/**
 * The run options of each run inside an open transaction, to the adapter whose transaction it
 * is: set before the handlers start, removed once they all settled (before the commit).
 */
const openRuns = new WeakMap<object, InboxTransactions<never>>();

/**
 * `tx(context)` of an inbox worker or direct inbox (`owner`, named in the error): the transaction of
 * `transactions` that `context`'s handler runs in. `options_invalid` for any other context: a run
 * without a transaction adapter or with another one, a receiver that does not run the inbox's rows,
 * a context kept after its run, or no context at all.
 */
export function openTransaction<Tx>(
  transactions: InboxTransactions<Tx> | undefined,
  context: HandlerContext,
  owner: string,
): Tx {
  const run = typeof context === 'object' && context !== null ? transactionRunOf(context) : undefined;
  if (transactions === undefined || run === undefined || openRuns.get(run) !== transactions) {
    const why =
      transactions === undefined
        ? `this ${owner} has no \`transactions\` adapter`
        : `the context is not that of a handler running in one of this ${owner}'s transactions (a receiver without this inbox, another adapter, a context kept after its handler returned)`;
    throw new WebhookError('options_invalid', `${owner}.tx(context): ${why}. See docs/inbox.md.`);
  }
  return context.tx as Tx;
}

/** Runs a statement without parameters in the run's transaction; resolves how many rows it returned. */
export type Execute = (sql: string) => Promise<number>;

/** Rolls the transaction back while carrying the verdict out. */
class Rollback {
  constructor(readonly verdict: Verdict) {}
}

/** A run of one row. */
export interface RowRun {
  readonly id: number;
  /** The fencing token of the claim this run holds (the completion matches it). */
  readonly fence: number;
  readonly attempt: number;
  /** The claim's lease in ms (the receiver's `leaseMs`): extended to it from now while the handlers run. */
  readonly leaseMs: number;
  /** The receiver's run of the row's delivery with these options (the row as its held claim, `hold`). */
  readonly execute: (options: RowRunOptions) => Promise<Verdict>;
  readonly signal: AbortSignal;
  /** Handler budget in ms; default the receiver's `leaseMs` minus 1 s. */
  readonly timeoutMs?: number | undefined;
  /** Whether the claim's lease is extended from the inbox's connection while the handlers run. */
  readonly extendLease: boolean;
  /**
   * Direct mode: work at the start of the transaction (the claim of the row, the stale guard). A
   * verdict ends the run there: committed, without running the handlers.
   */
  readonly begin?: ((execute: Execute) => Promise<Verdict | undefined>) | undefined;
  /** Called with the verdict as soon as the run gives it, before the transaction ends. */
  readonly onVerdict?: ((verdict: Verdict) => void) | undefined;
}

/** How a run ended: its verdict, and whether the row's move to `handled` (or the `begin` verdict) committed. */
export interface RowRunResult {
  readonly verdict: Verdict;
  readonly completed: boolean;
}

/** Moves the run's row to `handled`; resolves whether the fencing token still held. */
type Complete = () => Promise<boolean>;

/**
 * The row as the run's claim, a {@link AsyncHeld} (dedup/claims.ts): its token is the row's fence,
 * `complete` its move to `handled` (in the app's transaction, or on the inbox's own connection),
 * `extend` its lease. `settled` resolves once the run completed or released it (after late handlers
 * too); `state.claimed` says whether the run took it (a row refused before its handlers never does).
 */
function rowClaim(queue: InboxQueue, run: RowRun, complete: Complete) {
  const state = { claimed: false, completed: false };
  let done!: () => void;
  const settled = new Promise<void>((resolve) => {
    done = resolve;
  });
  const hold = (): AsyncHeld => {
    state.claimed = true;
    const held: AsyncHeld = {
      sync: false,
      token: String(run.fence),
      leaseEndsAt: queue.clock.now() + run.leaseMs,
      complete: async () => {
        try {
          state.completed = await complete();
          return state.completed;
        } catch (error) {
          return { error };
        } finally {
          done();
        }
      },
      release: async () => {
        done();
        return true;
      },
    };
    if (!run.extendLease) return held;
    return {
      ...held,
      extend: async () => {
        try {
          return await queue.extend(run.id, run.fence, run.leaseMs);
        } catch (error) {
          return { error };
        }
      },
    };
  };
  return { hold, state, settled };
}

async function runOnce<Tx>(
  queue: InboxQueue,
  run: RowRun,
  complete: Complete,
  open?: { tx: Tx; transactions: InboxTransactions<Tx> },
): Promise<RowRunResult> {
  const { hold, state, settled } = rowClaim(queue, run, complete);
  const options: RowRunOptions & { timeoutMs?: number; tx?: unknown } = {
    attempt: run.attempt,
    signal: run.signal,
    hold,
  };
  if (run.timeoutMs !== undefined) options.timeoutMs = run.timeoutMs;
  if (open) {
    options.tx = open.tx;
    openRuns.set(options, open.transactions as InboxTransactions<never>);
  }
  try {
    const verdict = await run.execute(options);
    run.onVerdict?.(verdict);
    // Handlers past their deadline still run: the claim (and the transaction) wait for them.
    if (state.claimed) await settled;
    return { verdict, completed: state.completed };
  } finally {
    openRuns.delete(options);
  }
}

/**
 * Runs `run`'s row once: in a transaction of `transactions` when given (committed only when the row
 * moved to `handled`, or `begin` ended the run), otherwise completing the row on the inbox's own
 * connection after the handlers. Rejects only when the database does.
 */
export async function runRow<Tx>(
  queue: InboxQueue,
  transactions: InboxTransactions<Tx> | undefined,
  run: RowRun,
): Promise<RowRunResult> {
  if (!transactions) {
    // Fixed statements for every row (SQLite prepares each once: an inlined text per row was a new
    // prepared statement each time), several rows finishing together in one (completions.ts).
    const complete = () => queue.completeOwn(run.id, run.fence);
    return runOnce(queue, run, complete);
  }
  try {
    return await transactions.transaction(async (tx, execute) => {
      const early = run.begin ? await run.begin(execute) : undefined;
      if (early) {
        run.onVerdict?.(early);
        return { verdict: early, completed: true };
      }
      const complete = async () => (await execute(queue.complete(run.id, run.fence))) === 1;
      const result = await runOnce(queue, run, complete, { tx, transactions });
      // Commit only a run that moved its row to handled: otherwise the handlers' writes go too.
      if (!result.completed) throw new Rollback(result.verdict);
      return result;
    });
  } catch (error) {
    if (!(error instanceof Rollback)) throw error;
    return { verdict: error.verdict, completed: false };
  }
}
