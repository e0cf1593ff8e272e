/**
 * The inbox table's SQL for PostgreSQL and SQLite. One column set and one set of statements, written
 * with `$n` parameters; SQLite gets them through {@link toSqlite}. Only the DDL and the claim (row
 * locks with `FOR UPDATE SKIP LOCKED` on PostgreSQL; one writer at a time on SQLite) differ.
 */
import { WebhookError } from '../shared/errors.js';
import { claimStatement } from './claim-sql.js';

/** The SQL dialect of an inbox. */
export type Dialect = 'postgres' | 'sqlite';

export const DEFAULT_INBOX_TABLE = 'webhook_inbox';

/** The columns every list shows (all but the body and what reruns it). */
export const ROW_COLUMNS =
  'id, dedup_key, service, event, delivery_id, event_at, ordering_key, status, attempts, run_at, lease_until, fence, last_error_code, last_error_message, received_at, handled_at';

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** `"name"` or `"schema"."name"` (PostgreSQL only), after checking each part. */
export function quoteTable(table: string, dialect: Dialect): { quoted: string; base: string } {
  const parts = typeof table === 'string' ? table.split('.') : [];
  if (
    parts.length < 1 ||
    parts.length > (dialect === 'postgres' ? 2 : 1) ||
    !parts.every((p) => NAME.test(p))
  ) {
    throw new WebhookError(
      'options_invalid',
      `Inbox table ${JSON.stringify(table)}: use letters, digits and underscores${dialect === 'postgres' ? ', as `name` or `schema.name`' : ''}.`,
    );
  }
  return { quoted: parts.map((p) => `"${p}"`).join('.'), base: parts.at(-1)! };
}

/**
 * The inbox table and its indexes for PostgreSQL (statements separated by `;\n`), for your migrations.
 *
 * @example
 * ```ts
 * import { postgresInboxDDL } from '@svc/webhooks/postgres';
 *
 * console.log(postgresInboxDDL('webhook_inbox'));
 * ```
 */
export function postgresInboxDDL(table: string = DEFAULT_INBOX_TABLE): string {
  return ddl(table, 'postgres');
}

/**
 * The inbox table and its indexes for SQLite (statements separated by `;\n`), for your migrations.
 *
 * @example
 * ```ts
 * import { sqliteInboxDDL } from '@svc/webhooks/sqlite';
 *
 * console.log(sqliteInboxDDL('webhook_inbox'));
 * ```
 */
export function sqliteInboxDDL(table: string = DEFAULT_INBOX_TABLE): string {
  return ddl(table, 'sqlite');
}

function ddl(table: string, dialect: Dialect): string {
  const { quoted, base } = quoteTable(table, dialect);
  const pg = dialect === 'postgres';
  return [
    `CREATE TABLE IF NOT EXISTS ${quoted} (
  id ${pg ? 'BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
  dedup_key TEXT NOT NULL UNIQUE,
  service TEXT NOT NULL,
  event TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  event_at BIGINT NOT NULL,
  ordering_key TEXT,
  status TEXT NOT NULL CHECK (status IN ('received', 'processing', 'handled', 'failed', 'dead', 'quarantined', 'superseded')),
  attempts INTEGER NOT NULL DEFAULT 0,
  run_at BIGINT NOT NULL,
  lease_until BIGINT,
  fence BIGINT NOT NULL DEFAULT 0,
  last_error_code TEXT,
  last_error_message TEXT,
  received_at BIGINT NOT NULL,
  handled_at BIGINT,
  headers TEXT NOT NULL,
  route TEXT,
  traceparent TEXT,
  body ${pg ? 'BYTEA' : 'BLOB'} NOT NULL
)`,
    // The claim's window: a service's waiting rows that have an ordering key, oldest due first; and
    // those that have none (they wait for nobody). The service leads, so one service's backlog is not
    // read by the other's worker.
    `CREATE INDEX IF NOT EXISTS "${base}_keyed_runnable_idx" ON ${quoted} (service, run_at, id) WHERE ordering_key IS NOT NULL AND status IN ('received', 'failed', 'processing')`,
    `CREATE INDEX IF NOT EXISTS "${base}_unkeyed_runnable_idx" ON ${quoted} (service, run_at, id) WHERE ordering_key IS NULL AND status IN ('received', 'failed', 'processing')`,
    // The turn of a key: its pending rows in event order (the first is the key's head). Pending only:
    // a key's handled rows would otherwise lengthen every claim of it for as long as they are kept.
    `CREATE INDEX IF NOT EXISTS "${base}_key_pending_idx" ON ${quoted} (ordering_key, event_at, id) WHERE ordering_key IS NOT NULL AND status IN ('received', 'failed', 'processing')`,
    // A key's runs: its rows under a lease (as many as runs in flight), so "is one running?" is one
    // probe however many rows of the key wait.
    `CREATE INDEX IF NOT EXISTS "${base}_key_running_idx" ON ${quoted} (ordering_key, lease_until) WHERE ordering_key IS NOT NULL AND status = 'processing'`,
    // The stale guard: the newest handled event of a key.
    `CREATE INDEX IF NOT EXISTS "${base}_key_handled_idx" ON ${quoted} (ordering_key, event_at) WHERE ordering_key IS NOT NULL AND status = 'handled'`,
    `CREATE INDEX IF NOT EXISTS "${base}_handled_idx" ON ${quoted} (handled_at) WHERE status IN ('handled', 'superseded')`,
    // Payload drift by service, event and path, beside the rows (drift.ts).
    driftDDL(table, dialect),
  ].join(';\n');
}

/** The drift table of inbox table `table`: `<table>_drift`, in the same schema on PostgreSQL. */
export function driftTable(table: string, dialect: Dialect): string {
  const { quoted, base } = quoteTable(table, dialect);
  return `${quoted.slice(0, quoted.length - base.length - 2)}"${base}_drift"`;
}

/** The drift table's DDL, appended to the inbox's (below); counted and read by drift.ts. */
export function driftDDL(table: string, dialect: Dialect): string {
  return `CREATE TABLE IF NOT EXISTS ${driftTable(table, dialect)} (
  service TEXT NOT NULL,
  event TEXT NOT NULL,
  path TEXT NOT NULL,
  deliveries BIGINT NOT NULL,
  first_seen_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  PRIMARY KEY (service, event, path)
)`;
}

/** The LISTEN/NOTIFY channel of a PostgreSQL inbox table (a checked identifier). */
export function notifyChannel(table: string): string {
  return `${quoteTable(table, 'postgres').base}_wake`;
}

/** A `$n` statement in SQLite's form: `?` placeholders, and which parameter (0-based) each one takes. */
export function sqliteForm(text: string): { text: string; order: number[] } {
  const order: number[] = [];
  const rewritten = text.replace(/\$(\d+)/g, (_, n: string) => {
    order.push(Number(n) - 1);
    return '?';
  });
  return { text: rewritten, order };
}

/** Rewrites `$n` parameters to `?` with the values in the order they appear (SQLite). */
export function toSqlite(text: string, params: readonly unknown[]): { text: string; params: unknown[] } {
  const { text: rewritten, order } = sqliteForm(text);
  return { text: rewritten, params: order.map((i) => params[i]) };
}

/** Rows one completion statement completes at most (completions.ts): its padded width, one shape prepared once. */
export const COMPLETE_MANY = 16;

/**
 * The completion of up to {@link COMPLETE_MANY} rows: `$1` now, then each row's id and fence. A batch
 * of fewer rows repeats its first row's pair (the same row twice is completed once).
 */
export function completeManyText(table: string): string {
  const ids: string[] = [];
  const fences: string[] = [];
  for (let i = 0; i < COMPLETE_MANY; i++) {
    ids.push(`$${2 + 2 * i}`);
    fences.push(`WHEN $${2 + 2 * i} THEN CAST($${3 + 2 * i} AS BIGINT)`);
  }
  return `UPDATE ${table} SET status = 'handled', handled_at = $1, lease_until = NULL, last_error_code = NULL, last_error_message = NULL WHERE id IN (${ids.join(', ')}) AND status = 'processing' AND fence = CASE id ${fences.join(' ')} END RETURNING id`;
}

/** The statements of an inbox table. */
export function inboxStatements(table: string, dialect: Dialect) {
  const { quoted: t } = quoteTable(table, dialect);
  const pg = dialect === 'postgres';
  const insert = `INSERT INTO ${t} (dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, headers, route, traceparent, body, last_error_code, last_error_message) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT (dedup_key) DO NOTHING`;
  // An event older than one of its key already handled (the row is the statement's own table).
  const stale = `${t}.ordering_key IS NOT NULL AND EXISTS (SELECT 1 FROM ${t} n WHERE n.ordering_key = ${t}.ordering_key AND n.status = 'handled' AND n.event_at > ${t}.event_at)`;
  return {
    // PostgreSQL: the same round trip wakes the workers that LISTEN on the table's channel.
    insert: pg
      ? `WITH ins AS (${insert} RETURNING id) SELECT id, pg_notify('${notifyChannel(table)}', '') FROM ins`
      : `${insert} RETURNING id`,
    // SQLite: the receipt's insert, run for the count of rows it wrote (1, or 0 for a duplicate): no
    // RETURNING, whose rows SQLite collects in a table of their own before the first one comes back.
    // A row to run binds only what it has (the same parameters, without status and error: 12 of 15).
    store: `INSERT INTO ${t} (dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, headers, route, traceparent, body) VALUES ($1, $2, $3, $4, $5, $6, 'received', $8, $9, $10, $11, $12, $13) ON CONFLICT (dedup_key) DO NOTHING`,
    storeQuarantined: insert,
    ddl: ddl(table, dialect),
    // The rows that run next, at most one per ordering key; its cost does not grow with a key's
    // backlog (claim-sql.ts). Each claimed row comes back with `stale`: the stale guard's condition,
    // read in the claim's own round trip, so `supersede` runs only for a row that is stale
    // (docs/inbox-ordering.md).
    claim: claimStatement(t, pg, stale),
    // The stale guard: an event older than one of its key already handled never runs.
    supersede: `UPDATE ${t} SET status = 'superseded', lease_until = NULL, handled_at = $3 WHERE id = $1 AND fence = $2 AND status = 'processing' AND ${stale} RETURNING id`,
    // The completion on the inbox's own connection ($1 id, $2 fence, $3 now).
    complete: completeText(t, '$1', '$2', '$3'),
    // Several rows' completions in one statement ($1 now, then id and fence pairs; completions.ts).
    completeMany: completeManyText(t),
    extend: `UPDATE ${t} SET lease_until = $3 WHERE id = $1 AND fence = $2 AND status = 'processing' RETURNING id`,
    settle: `UPDATE ${t} SET status = $3, run_at = $4, lease_until = NULL, last_error_code = $5, last_error_message = $6, attempts = attempts - $7 WHERE id = $1 AND fence = $2 AND status = 'processing' RETURNING id`,
    // An authentic row a re-drive could not run (docs/inbox.md "When the payload changes").
    quarantine: `UPDATE ${t} SET status = 'quarantined', lease_until = NULL, last_error_code = $3, last_error_message = $4 WHERE id = $1 AND fence = $2 AND status = 'processing' RETURNING id`,
    show: `SELECT * FROM ${t} WHERE id = $1`,
    // Direct mode: the stale guard's condition (its claim carries it), a row's state by dedup key,
    // and a failed run recorded after its rollback.
    stale,
    state: `SELECT id, status, attempts, fence, lease_until FROM ${t} WHERE dedup_key = $1`,
    record: `UPDATE ${t} SET status = $3, run_at = $4, lease_until = NULL, last_error_code = $5, last_error_message = $6, attempts = attempts + 1, fence = fence + 1 WHERE id = $1 AND fence = $2 AND status IN ('received', 'failed', 'processing') RETURNING id`,
    // Observability: rows by status, and the oldest pending row's receipt.
    depth: `SELECT status, COUNT(*) AS n FROM ${t} GROUP BY status`,
    oldestPending: `SELECT MIN(received_at) AS at FROM ${t} WHERE status IN ('received', 'failed', 'processing')`,
    purge: `DELETE FROM ${t} WHERE id IN (SELECT id FROM ${t} WHERE status IN ('handled', 'superseded') AND handled_at < $1 LIMIT $2) RETURNING id`,
    table: t,
  };
}

/** The move of a claimed row to `handled`, fenced: returns the row's id when the fencing token still holds. */
function completeText(table: string, id: string, fence: string, now: string): string {
  return `UPDATE ${table} SET status = 'handled', handled_at = ${now}, lease_until = NULL, last_error_code = NULL, last_error_message = NULL WHERE id = ${id} AND fence = ${fence} AND status = 'processing' RETURNING id`;
}

/**
 * The completion with its integers inlined (no parameters), so every transaction adapter runs it as
 * plain text on the app's transaction. Without one, the inbox's own connection runs the
 * parameterised `complete` of {@link inboxStatements}: one prepared statement for every row.
 */
export function completeStatement(table: string, id: number, fence: number, now: number): string {
  for (const n of [id, fence, now]) {
    if (!Number.isSafeInteger(n)) throw new TypeError(`inbox: ${String(n)} is not a whole number`);
  }
  return completeText(table, String(id), String(fence), String(now));
}
