/**
 * Turns at a SQLite file's one write lock, in this process: the inbox's own statements (a receipt's
 * INSERT, a claim, a settle) and the inbox workers' transactions (`BEGIN IMMEDIATE` … `COMMIT` on the
 * app's connection, held while the handlers run). SQLite waits for a lock by blocking the thread,
 * and the transaction holding it can only end on that same thread's event loop: a receipt meeting
 * a worker's open transaction stalled the process for its busy timeout, and a second worker's
 * `BEGIN IMMEDIATE` for up to the app connection's (docs/benchmarks.md, "SQLite worker in the
 * receiving process"). Here a write waits for its turn as a promise instead, so the lock is free
 * whenever one of them runs. Statements go first: a transaction begins only once no statement runs
 * or waits, so a receipt waits for at most the one row running, never for a worker's batch; the
 * transactions (mail's and CRM's workers on one file) take turns among themselves.
 */

import type { InboxDb } from './db.js';

/** The turns of one database file. */
export interface WriteTurns {
  /**
   * Runs a write statement of the inbox's own connection once no transaction holds the file, or
   * after `waitMs` regardless (then the driver's own lock handling decides, as for another
   * process's lock); `op` gets the time left of `waitMs`.
   */
  statement<T>(op: (leftMs: number) => T | Promise<T>, waitMs: number): Promise<T>;
  /**
   * {@link statement} without a promise when it can: while no transaction holds the file, `op` runs at
   * once and its value (or its promise) comes back as is; otherwise it waits its turn as `statement`.
   */
  statementNow<T>(op: (leftMs: number) => T | Promise<T>, waitMs: number): T | Promise<T>;
  /** Runs `work` (a transaction that holds the write lock) alone, after the statements waiting. */
  transaction<T>(work: () => Promise<T>): Promise<T>;
}

/** A file's turns while inboxes are open on it. */
interface File {
  readonly turns: WriteTurns;
  users: number;
}

/** By resolved file path; a file's entry goes when the last inbox on it closes. */
const files = new Map<string, File>();

type PathModule = { resolve(path: string): string };

/** The turns of one inbox's file, and its release when that inbox closes. */
export interface FileTurns {
  readonly turns: WriteTurns;
  release(): void;
}

/**
 * The turns of the database file at `path`, shared in this process by every inbox opened on it (the
 * path resolved against the working directory where the runtime has `node:path`).
 */
export function writeTurnsOf(given: string): FileTurns {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const paths = runtime?.getBuiltinModule?.('node:path') as PathModule | undefined;
  const path = paths ? paths.resolve(given) : given;
  let file = files.get(path);
  if (!file) {
    file = { turns: createTurns(), users: 0 };
    files.set(path, file);
  }
  file.users++;
  let released = false;
  const opened = file;
  return {
    turns: file.turns,
    release() {
      if (released) return;
      released = true;
      if (--opened.users === 0 && files.get(path) === opened) files.delete(path);
    },
  };
}

function createTurns(): WriteTurns {
  /** A transaction holds the file. */
  let holding = false;
  /** Statements running (counted from when their turn is given, so nothing slips in between). */
  let statements = 0;
  const waitingStatements = new Set<() => void>();
  const waitingTransactions: (() => void)[] = [];

  function next(): void {
    if (holding) return;
    if (waitingStatements.size > 0) {
      for (const start of [...waitingStatements]) start();
      return;
    }
    if (statements > 0) return;
    const start = waitingTransactions.shift();
    if (!start) return;
    holding = true;
    start();
  }

  const turns: WriteTurns = {
    async statement(op, waitMs) {
      const started = performance.now();
      if (holding)
        await new Promise<void>((resolve) => {
          const start = () => {
            clearTimeout(timer);
            waitingStatements.delete(start);
            statements++;
            resolve();
          };
          const timer = setTimeout(start, waitMs);
          waitingStatements.add(start);
        });
      else statements++;
      try {
        return await op(Math.max(1, waitMs - (performance.now() - started)));
      } finally {
        statements--;
        next();
      }
    },

    statementNow(op, waitMs) {
      if (holding) return turns.statement(op, waitMs);
      statements++;
      let result: ReturnType<typeof op>;
      try {
        result = op(waitMs);
      } catch (error) {
        statements--;
        next();
        throw error;
      }
      if (!(result instanceof Promise)) {
        statements--;
        next();
        return result;
      }
      return result.finally(() => {
        statements--;
        next();
      });
    },

    async transaction(work) {
      if (holding || statements > 0 || waitingStatements.size > 0 || waitingTransactions.length > 0)
        await new Promise<void>((resolve) => waitingTransactions.push(resolve));
      else holding = true;
      try {
        return await work();
      } finally {
        holding = false;
        next();
      }
    },
  };
  return turns;
}

/** Statements that only read: WAL lets them run beside a writer, so they take no turn. */
const READ = /^\s*SELECT\b/i;

/** `db` (the inbox's own SQLite connection) with its writes taking their turns at the file. */
export function withWriteTurns(db: InboxDb, file: FileTurns, callTimeoutMs: number): InboxDb {
  const { turns } = file;
  return {
    ...db,
    query: (text, params, timeoutMs = callTimeoutMs) =>
      READ.test(text)
        ? db.query(text, params, timeoutMs)
        : turns.statement((left) => db.query(text, params, left), timeoutMs),
    // A write by its kind, not its text: no READ test, and no promise while the file is free.
    ...(db.write === undefined
      ? {}
      : {
          write: (text: string, params: readonly unknown[], timeoutMs = callTimeoutMs) =>
            turns.statementNow((left) => db.write!(text, params, left), timeoutMs),
        }),
    exec: (ddl) => turns.statement(() => db.exec(ddl), callTimeoutMs),
    close() {
      file.release();
      return db.close();
    },
  };
}
