/**
 * Rows moved to `handled` on the inbox's own connection (a worker without a transaction adapter),
 * several per statement: the completions asked for while the previous statement ran go together as
 * one fenced UPDATE. On SQLite each statement is its own
 * commit (its pages written to the WAL once, whatever the rows), on PostgreSQL its own round trip, so
 * eight rows finishing together cost about what one did (docs/benchmarks.md, "The worker, claiming
 * ahead"). Each row still matches its own fencing token; a row whose fence moved on is not completed
 * and its caller is told so.
 */
import type { Clock } from '../shared/clock.js';
import type { InboxDb } from './db.js';
import { COMPLETE_MANY } from './sql.js';

interface Waiting {
  readonly id: number;
  readonly fence: number;
  readonly resolve: (completed: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * `complete(id, fence)`: resolves whether the row moved to `handled` (its fence still held), once the
 * statement that carried it ran; rejects as that statement did.
 */
export function createCompletions(
  db: InboxDb,
  statements: { complete: string; completeMany: string },
  clock: Clock,
): (id: number, fence: number) => Promise<boolean> {
  const waiting: Waiting[] = [];
  let running = false;

  /** The completions that waited, up to {@link COMPLETE_MANY} a statement, until none wait. */
  async function flush(): Promise<void> {
    running = true;
    while (waiting.length > 0) {
      // One row's two runs (a lease taken over by this same worker) never share a statement: the
      // fence of an id is matched once per statement.
      const batch: Waiting[] = [];
      const ids = new Set<number>();
      for (let i = 0; i < waiting.length && batch.length < COMPLETE_MANY; ) {
        const row = waiting[i]!;
        if (ids.has(row.id)) i++;
        else {
          ids.add(row.id);
          batch.push(row);
          waiting.splice(i, 1);
        }
      }
      const params: unknown[] = [clock.now()];
      for (let i = 0; i < COMPLETE_MANY; i++) {
        const row = batch[i] ?? batch[0]!;
        params.push(row.id, row.fence);
      }
      try {
        const done = new Set<number>();
        for (const row of await db.query(statements.completeMany, params)) done.add(Number(row.id));
        for (const row of batch) row.resolve(done.has(row.id));
      } catch (error) {
        for (const row of batch) row.reject(error);
      }
    }
    running = false;
  }

  return async (id, fence) => {
    // The rows finishing while a statement runs wait for it and go together in the next, as a group
    // commit; a row finishing alone (one in flight) goes at once, in the one-row statement.
    if (running)
      return new Promise<boolean>((resolve, reject) => waiting.push({ id, fence, resolve, reject }));
    running = true;
    try {
      return (await db.query(statements.complete, [id, fence, clock.now()])).length === 1;
    } finally {
      if (waiting.length > 0) void flush();
      else running = false;
    }
  };
}
