import { WebhookError } from '../shared/errors.js';

/**
 * SQL of the Postgres store. Times are epoch ms in `bigint` columns. `now` is the injected clock
 * (parameter) or, when that is null, the database server's clock, so app hosts with skewed clocks
 * agree on when a lease ends.
 */

/**
 * Default table of `createPostgresStore()`: `webhook_dedup` in the search path.
 *
 * @example
 * ```ts
 * await pool.query(`SELECT count(*) FROM ${DEFAULT_POSTGRES_TABLE}`);
 * ```
 */
export const DEFAULT_POSTGRES_TABLE = 'webhook_dedup';

// Plain identifiers only (optionally schema-qualified): no quoting games, no injection.
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** `"schema"."table"` for a validated `table` or `schema.table` name. */
export function quoteTable(table: string): string {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new WebhookError(
      'options_invalid',
      'Postgres dedup table must be `name` or `schema.name` of letters, digits and underscores (max 63 each).',
    );
  }
  return parts.map((part) => `"${part}"`).join('.');
}

/**
 * The table DDL. `expires_at` is the lease end of a claim and the expiry of a completed record; the
 * index serves `prune()`.
 *
 * @example
 * ```ts
 * import { postgresDedupDDL } from '@svc/webhooks/postgres';
 * console.log(postgresDedupDDL('webhook_dedup')); // paste into your migration tool
 * ```
 */
export function postgresDedupDDL(table: string = DEFAULT_POSTGRES_TABLE): string {
  const name = quoteTable(table);
  const index = `"${table.replace('.', '_')}_expires_at_idx"`;
  return `CREATE TABLE IF NOT EXISTS ${name} (
  key        text    PRIMARY KEY,
  token      text    NOT NULL,
  completed  boolean NOT NULL DEFAULT false,
  expires_at bigint  NOT NULL
);
CREATE INDEX IF NOT EXISTS ${index} ON ${name} (expires_at);`;
}

const NOW = 'COALESCE($NOW::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)';

// A row a store of an older version or a hand edit left with a NULL, or with a time past ±(2^53 − 1) ms
// (2^63 − 1: no clock reaches it, and it is no number JavaScript holds): read as expired and replaced.
const UNREADABLE = (d: string) =>
  `(${d}.token IS NULL OR ${d}.completed IS NULL OR ${d}.expires_at IS NULL OR ${d}.expires_at NOT BETWEEN -${Number.MAX_SAFE_INTEGER} AND ${Number.MAX_SAFE_INTEGER})`;

/** The statements for one table; `$n` numbering matches the params built in postgres.ts. */
export function statements(table: string) {
  const t = quoteTable(table);
  const now = (n: number) => NOW.replace('$NOW', `$${n}`);
  return {
    // $1 key, $2 token, $3 leaseMs, $4 now|null. Takes the key when it is free or its record expired,
    // except a row holding this very token, uncompleted: this claim sent again, or the marker of its
    // abandon (abandon below), which it must leave alone. A row comes back only when it won; a claim
    // that did not win reads the row (`read`).
    claim: `INSERT INTO ${t} AS d (key, token, completed, expires_at) VALUES ($1, $2, false, ${now(4)} + $3::bigint)
ON CONFLICT (key) DO UPDATE SET token = excluded.token, completed = false, expires_at = excluded.expires_at
WHERE d.expires_at <= excluded.expires_at - $3::bigint AND (d.token <> excluded.token OR d.completed)
RETURNING d.expires_at`,
    // $1 key, $2 now|null: the row a claim did not win against, and the database's time.
    read: `SELECT token, completed, expires_at, ${now(2)} AS now FROM ${t} WHERE key = $1`,
    // $1 key, $2 token, $3 leaseMs, $4 now|null. Takes over a row this store cannot read (UNREADABLE).
    takeover: `UPDATE ${t} AS d SET token = $2, completed = false, expires_at = ${now(4)} + $3::bigint
WHERE d.key = $1 AND ${UNREADABLE('d')} RETURNING d.expires_at`,
    // $1 key, $2 token, $3 leaseMs, $4 now|null. The abandoned-token marker is a row holding the token
    // with `expires_at` = -(now + leaseMs): below every "now", so it reads as expired (free) to every
    // other claimer, while its magnitude keeps prune() off it for leaseMs; the claim above refuses a row
    // holding its own token. Written over a free, expired or unreadable key or this token's own live
    // lease; a completed record counts as done (ok), another token's live lease as not yet (nothing
    // written).
    abandon: `WITH clock AS (SELECT ${now(4)} AS now),
mark AS (
  INSERT INTO ${t} AS d (key, token, completed, expires_at)
  SELECT $1, $2, false, -(clock.now + $3::bigint) FROM clock
  ON CONFLICT (key) DO UPDATE SET token = excluded.token, completed = false, expires_at = excluded.expires_at
  WHERE d.expires_at <= ${now(4)} OR (d.token = excluded.token AND NOT d.completed) OR ${UNREADABLE('d')}
  RETURNING 1
)
SELECT true AS ok FROM mark
UNION ALL
SELECT d.completed FROM ${t} d WHERE d.key = $1 AND NOT EXISTS (SELECT 1 FROM mark)`,
    // $1 key, $2 token, $3 ttlMs, $4 now|null
    complete: `UPDATE ${t} SET completed = true, expires_at = ${now(4)} + $3::bigint
WHERE key = $1 AND token = $2 AND NOT completed AND expires_at > ${now(4)} RETURNING 1 AS ok`,
    // $1 key, $2 token, $3 now|null
    release: `DELETE FROM ${t} WHERE key = $1 AND token = $2 AND NOT completed AND expires_at > ${now(3)}
RETURNING 1 AS ok`,
    // $1 key, $2 token, $3 leaseMs, $4 now|null
    extend: `UPDATE ${t} SET expires_at = ${now(4)} + $3::bigint
WHERE key = $1 AND token = $2 AND NOT completed AND expires_at > ${now(4)} RETURNING 1 AS ok`,
    // $1 now|null
    // (an abandoned-token marker, negative, goes once -expires_at has passed too)
    // (`expires_at >= -now`, not `-expires_at <= now`: negating the smallest bigint overflows)
    prune: `WITH gone AS (DELETE FROM ${t} WHERE expires_at <= ${now(1)} AND expires_at >= -${now(1)} RETURNING 1)
SELECT count(*)::int AS n FROM gone`,
  };
}
