/**
 * A second, raw connection to a SQLite file, for tests that act on the file beside the store (hold its
 * write lock, open it read-only, read its rows): node:sqlite where the runtime has it, else
 * better-sqlite3 (whose native build matches one Node version only).
 */
import { createRequire } from 'node:module';

export interface RawSqlite {
  exec(sql: string): unknown;
  prepare(sql: string): {
    get(...params: (string | number)[]): unknown;
    all(...params: (string | number)[]): unknown[];
    run(...params: (string | number)[]): { changes: number | bigint };
  };
  close(): unknown;
}

type NodeSqlite = { DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => RawSqlite };
type BetterSqlite3 = new (path: string, options?: { readonly?: boolean }) => RawSqlite;

/** Which driver {@link openRawSqlite} uses in this runtime. */
export function rawSqliteDriver(): 'node:sqlite' | 'better-sqlite3' {
  return process.getBuiltinModule?.('node:sqlite') ? 'node:sqlite' : 'better-sqlite3';
}

/** Opens `path` (busy_timeout 5 s, like better-sqlite3's default), optionally read-only. */
export function openRawSqlite(path: string, { readOnly = false } = {}): RawSqlite {
  const nodeSqlite = process.getBuiltinModule?.('node:sqlite') as NodeSqlite | undefined;
  const db = nodeSqlite
    ? new nodeSqlite.DatabaseSync(path, { readOnly })
    : new (createRequire(import.meta.url)('better-sqlite3') as BetterSqlite3)(path, { readonly: readOnly });
  db.exec('PRAGMA busy_timeout = 5000');
  return db;
}
