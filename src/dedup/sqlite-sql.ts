import { WebhookError } from '../shared/errors.js';

/**
 * SQL of the SQLite store. Times are epoch ms in INTEGER columns, passed in by the store (its clock),
 * so every statement is deterministic under an injected clock. Parameters are positional (`?`): the
 * one binding style better-sqlite3, node:sqlite and bun:sqlite all accept the same way.
 */

/** Default table of `createSqliteStore()`. */
export const DEFAULT_SQLITE_TABLE = 'webhook_dedup';

// Plain identifiers only: no quoting games, no injection.
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** `"table"` for a validated table name. */
function quoteTable(table: string): string {
  if (!IDENTIFIER.test(table)) {
    throw new WebhookError(
      'options_invalid',
      'createSqliteStore: `table` must be letters, digits and underscores (at most 63, not starting with a digit).',
    );
  }
  return `"${table}"`;
}

/**
 * The table and its index. `expires_at` is the lease end of a claim, the expiry of a completed record,
 * or, negated, the end of an abandoned token's marker (see `abandon` below). WITHOUT ROWID: the key is
 * the primary key, so a row lives in the key's own b-tree and a claim touches one tree plus the index.
 */
export function sqliteDedupDDL(table: string): string {
  const name = quoteTable(table);
  return `CREATE TABLE IF NOT EXISTS ${name} (
  key        TEXT    PRIMARY KEY NOT NULL,
  token      TEXT    NOT NULL,
  completed  INTEGER NOT NULL DEFAULT 0,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS "${table}_expires_at" ON ${name} (expires_at);`;
}

/** Most rows one prune statement deletes; `prune()` repeats it, yielding to the event loop between. */
export const PRUNE_BATCH = 500;

/**
 * What a row this store can read looks like, in the columns of `t` (the table's name or alias). A row
 * written by hand or by an older version (a NULL, text in `expires_at`, a `completed` of 2, a time
 * past ±(2^53 − 1) ms, such as 2^63 − 1, which no clock reaches and which the drivers cannot read as a
 * number) is read as expired and replaced, never left to hold its key forever (the store warns once).
 */
const readable = (t: string) =>
  `typeof(${t}.token) = 'text' AND ${t}.completed IN (0, 1) AND typeof(${t}.expires_at) = 'integer' AND ${t}.expires_at BETWEEN -${Number.MAX_SAFE_INTEGER} AND ${Number.MAX_SAFE_INTEGER}`;

/** The statements for one table; parameter order is documented above each and matched in sqlite.ts. */
export function sqliteStatements(table: string) {
  const t = quoteTable(table);
  return {
    // key, token, now + leaseMs. A free key: one statement, nothing read. Run with `run()`, whose
    // `changes` says whether it wrote: `get()` on a writing statement loses the commit's error
    // (SQLITE_FULL on a full disk) and would answer a claim that was never written.
    claim: `INSERT INTO ${t} (key, token, completed, expires_at) VALUES (?, ?, 0, ?) ON CONFLICT (key) DO NOTHING`,
    // key: read only when the claim above found the key taken.
    // An unreadable row comes back as NULLs: the driver never converts an integer it cannot hold.
    read: `SELECT ${['token', 'completed', 'expires_at'].map((c) => `CASE WHEN ${readable(t)} THEN ${c} END AS ${c}`).join(', ')} FROM ${t} WHERE key = ?`,
    // token, now + leaseMs, key, token, now. Takes over a record that expired (or that this store
    // cannot read); a claim or marker of this very token is answered from the read instead (its
    // lease, or the marker of its abandon: that claim must not run).
    takeover: `UPDATE ${t} SET token = ?, completed = 0, expires_at = ?
WHERE key = ? AND (token IS NOT ? OR completed = 1) AND (expires_at <= ? OR NOT (${readable(t)}))`,
    // now + ttlMs, key, token, now
    complete: `UPDATE ${t} SET completed = 1, expires_at = ?
WHERE key = ? AND token = ? AND completed = 0 AND expires_at > ?`,
    // key, token, now
    release: `DELETE FROM ${t} WHERE key = ? AND token = ? AND completed = 0 AND expires_at > ?`,
    // now + leaseMs, key, token, now
    extend: `UPDATE ${t} SET expires_at = ?
WHERE key = ? AND token = ? AND completed = 0 AND expires_at > ?`,
    // key, token, -(now + leaseMs), now. The marker of an abandoned token: the token with a negative
    // `expires_at`, below every "now", so every other claimer reads the key as free, while its
    // magnitude keeps prune off it for leaseMs and the claim refuses it to its own token (the read
    // answers it). Written over a free, expired or unreadable record or this token's own claim; never
    // over a live completed record or another token's live lease (the caller reads the row to tell
    // those two apart).
    abandon: `INSERT INTO ${t} (key, token, completed, expires_at) VALUES (?, ?, 0, ?)
ON CONFLICT (key) DO UPDATE SET token = excluded.token, completed = 0, expires_at = excluded.expires_at
WHERE ${t}.expires_at <= ? OR (${t}.token = excluded.token AND ${t}.completed = 0)
  OR NOT (${readable(t)})`,
    // now, now, limit. An abandoned-token marker (negative) goes once -expires_at has passed too.
    prune: `DELETE FROM ${t} WHERE key IN (
  SELECT key FROM ${t} WHERE expires_at <= ? AND -expires_at <= ? LIMIT ?
)`,
  };
}
