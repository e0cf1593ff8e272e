/**
 * Payload drift in the inbox's database (docs/inbox-observability.md "Payload drift"): a small table beside the
 * inbox table, one row per (service, event, path) with how many verified deliveries carried it and
 * when first and last. Written at receipt, only for a delivery that has drift (core/drift.ts), from the
 * receiver's one parse: a delivery without drift writes nothing more than its row. Paths only, never
 * values. Kept apart from the rows so purging handled rows does not forget what the services sent,
 * and so events acknowledged without a row (unknown, no handler) are counted too.
 */
import { truncateUntrusted } from '../core/untrusted.js';
import type { DbRow, InboxDb } from './db.js';
import { type Dialect, driftTable } from './sql.js';
import type { InboxStats } from './types.js';

/**
 * Distinct (service, event, path) rows the table takes; a path new past them is counted as `_other`
 * (the bound of the `svc_webhooks.drift` counter's attribute, core/drift-log.ts). Signed bodies name
 * the paths: this keeps a service's mistake from growing the table without end. Writers in parallel
 * may pass it by a few rows.
 */
const MAX_TRIPLES = 1_000;

/** One (service, event, path) of `inbox.stats().drift`. */
type DriftCount = InboxStats['drift'][number];

/** The statements of the drift table: count a delivery's paths ($1 service, $2 event, $3 JSON array, $4 now), read. */
export function driftStatements(table: string, dialect: Dialect) {
  const t = driftTable(table, dialect);
  const paths =
    dialect === 'postgres' ? 'jsonb_array_elements_text($3::jsonb) AS p(value)' : 'json_each($3) AS p';
  // A path the table holds, or any while it has room; else `_other`. Grouped, so `_other` is one row
  // of the insert however many paths it stands for.
  const path = `CASE WHEN (SELECT COUNT(*) FROM ${t}) < ${MAX_TRIPLES} OR EXISTS (SELECT 1 FROM ${t} k WHERE k.service = $1 AND k.event = $2 AND k.path = p.value) THEN p.value ELSE '_other' END`;
  return {
    // SQLite wants a WHERE in an upsert's SELECT (its parsing ambiguity); PostgreSQL takes it too.
    count: `INSERT INTO ${t} (service, event, path, deliveries, first_seen_at, last_seen_at) SELECT $1, $2, x.path, COUNT(*), $4, $4 FROM (SELECT ${path} AS path FROM ${paths} WHERE true) x WHERE true GROUP BY x.path ON CONFLICT (service, event, path) DO UPDATE SET deliveries = ${t}.deliveries + excluded.deliveries, last_seen_at = excluded.last_seen_at`,
    read: `SELECT service, event, path, deliveries, first_seen_at, last_seen_at FROM ${t} LIMIT ${MAX_TRIPLES * 2}`,
  };
}

/** Adds one delivery's drift paths to the table. */
export async function countDrift(
  db: InboxDb,
  statements: ReturnType<typeof driftStatements>,
  drift: { service: string; event: string; paths: readonly string[]; at: number },
  timeoutMs?: number,
): Promise<void> {
  if (drift.paths.length === 0) return;
  // The event cut like every untrusted name (the log line's event is cut the same way).
  const params = [drift.service, truncateUntrusted(drift.event), JSON.stringify(drift.paths), drift.at];
  await db.query(statements.count, params, timeoutMs);
}

const byName = (a: DriftCount, b: DriftCount): number =>
  compare(a.service, b.service) || compare(a.event, b.event) || compare(a.path, b.path);
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The table's rows, by service, event and path (in code points: a database's collation varies). */
export async function readDrift(
  db: InboxDb,
  statements: ReturnType<typeof driftStatements>,
): Promise<DriftCount[]> {
  const rows = await db.query(statements.read, []);
  return rows.map(driftCountOf).sort(byName);
}

function driftCountOf(row: DbRow): DriftCount {
  return {
    service: String(row.service),
    event: String(row.event),
    path: String(row.path),
    deliveries: Number(row.deliveries),
    firstSeenAt: Number(row.first_seen_at),
    lastSeenAt: Number(row.last_seen_at),
  };
}
