import { WebhookError } from '../shared/errors.js';

/**
 * SQL of the D1 store (SQLite). Times are epoch ms in INTEGER columns. `now` is the injected clock (a
 * bound parameter) or, when that is NULL, the database's own clock, so Workers running in different
 * places agree on when a lease ends. SQLite reads 'now' once per statement, so a statement compares
 * and writes against one instant.
 */

/** Default table of `createD1Store()`. */
export const DEFAULT_D1_TABLE = 'webhook_dedup';

// Plain identifiers only: no quoting games, no injection. D1 reserves the `_cf_` prefix and SQLite
// the `sqlite_` one.
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const RESERVED = /^(_cf_|sqlite_)/i;

/** `"table"` for a valid table name; `options_invalid` otherwise. */
export function quoteD1Table(table: string): string {
  if (typeof table !== 'string' || !IDENTIFIER.test(table) || RESERVED.test(table)) {
    throw new WebhookError(
      'options_invalid',
      'D1 dedup table must be a name of letters, digits and underscores (max 63), not starting with _cf_ or sqlite_.',
    );
  }
  return `"${table}"`;
}

/** The table and its index; the index serves `prune()`. One statement per entry (D1 `batch`). */
export function d1DedupDDL(table: string): string[] {
  const name = quoteD1Table(table);
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (
  key        TEXT    PRIMARY KEY,
  token      TEXT    NOT NULL,
  completed  INTEGER NOT NULL DEFAULT 0,
  expires_at INTEGER NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS "${table}_expires_at" ON ${name} (expires_at)`,
  ];
}

// The database's clock in epoch ms: julianday() exists in every SQLite, unlike unixepoch('subsec');
// ROUND because the day fraction times 86,400,000 lands a hair beside the whole millisecond.
const DB_NOW = `CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)`;

// A row this store can read; one written by hand or by an older version (a NULL, text in
// expires_at, a completed of 7) is read as expired and replaced.
const READABLE = (d: string) =>
  `(typeof(${d}.token) = 'text' AND ${d}.completed IN (0, 1) AND typeof(${d}.expires_at) = 'integer')`;

/** The statements for one table; `?n` numbering matches the bindings in d1.ts. */
export function d1Statements(table: string) {
  const t = quoteD1Table(table);
  const now = (n: number) => `COALESCE(?${n}, ${DB_NOW})`;
  return {
    // ?1 key, ?2 token, ?3 leaseMs, ?4 now|null. Takes the key when it is free or its record expired,
    // except a record holding this very token that is not completed: that is the marker of an
    // abandoned claim (abandon below) or this claim sent again, which it must leave alone. RETURNING
    // gives a row only when this statement wrote one: the claim was won.
    claim: `INSERT INTO ${t} AS d (key, token, completed, expires_at) VALUES (?1, ?2, 0, ${now(4)} + ?3)
ON CONFLICT (key) DO UPDATE SET token = excluded.token, completed = 0, expires_at = excluded.expires_at
WHERE d.expires_at <= excluded.expires_at - ?3 AND (d.token <> excluded.token OR d.completed = 1)
RETURNING expires_at`,
    // ?1 key, ?2 token, ?3 leaseMs, ?4 now|null. Takes over a row this store cannot read.
    takeover: `UPDATE ${t} AS d SET token = ?2, completed = 0, expires_at = ${now(4)} + ?3
WHERE d.key = ?1 AND NOT ${READABLE('d')} RETURNING expires_at`,
    // ?1 key, ?2 now|null: the record as the claim (run before it in the same batch) left it.
    read: `SELECT token, completed, expires_at, ${now(2)} AS now FROM ${t} WHERE key = ?1`,
    // ?1 key, ?2 token, ?3 leaseMs, ?4 now|null. The marker of an abandoned token holds it with
    // expires_at = -(now + leaseMs): below every "now", so it reads as expired (free) to every other
    // claimer, while its magnitude keeps prune() off it for leaseMs. Written over a free or expired key
    // or this token's own lease, or over a row it cannot read; a completed record or another token's live lease is left alone (the
    // `read` that follows in the batch tells the two apart).
    abandon: `INSERT INTO ${t} AS d (key, token, completed, expires_at) VALUES (?1, ?2, 0, -(${now(4)} + ?3))
ON CONFLICT (key) DO UPDATE SET token = excluded.token, completed = 0, expires_at = excluded.expires_at
WHERE d.expires_at <= ${now(4)} OR (d.token = excluded.token AND d.completed = 0) OR NOT ${READABLE('d')}
RETURNING 1 AS ok`,
    // ?1 key, ?2 token, ?3 ttlMs, ?4 now|null
    complete: `UPDATE ${t} SET completed = 1, expires_at = ${now(4)} + ?3
WHERE key = ?1 AND token = ?2 AND completed = 0 AND expires_at > ${now(4)} RETURNING 1 AS ok`,
    // ?1 key, ?2 token, ?3 now|null
    release: `DELETE FROM ${t} WHERE key = ?1 AND token = ?2 AND completed = 0 AND expires_at > ${now(3)}
RETURNING 1 AS ok`,
    // ?1 key, ?2 token, ?3 leaseMs, ?4 now|null
    extend: `UPDATE ${t} SET expires_at = ${now(4)} + ?3
WHERE key = ?1 AND token = ?2 AND completed = 0 AND expires_at > ${now(4)} RETURNING 1 AS ok`,
    // ?1 now|null. An abandoned-token marker (negative) goes once -expires_at has passed too.
    prune: `DELETE FROM ${t} WHERE expires_at <= ${now(1)} AND -expires_at <= ${now(1)}`,
  };
}
