/**
 * The inbox worker's claim: the next rows that may run, at most one per ordering key, in `(run_at, id)`
 * order, at a cost that does not grow with the rows waiting behind one key (docs/inbox-ordering.md).
 *
 * A key's rows run one at a time in `(event_at, id)` order: a row may run when it is due and its key
 * has no earlier row still pending and no row running under a live lease. One scan of every due row in
 * `(run_at, id)` order, checking each in turn, reads every waiting row of a blocked key before it
 * reaches another key's: 300,000 rows of one replayed body made each claim 0.5 to 1.3 s. So the claim
 * reads three bounded sources instead:
 * 1. a window: the first {@link CLAIM_WINDOW} due keyed rows of the service, each checked in turn
 *    (three index probes). Under ordinary load, the keyed rows it claims are here;
 * 2. the due rows without a key (they wait for nobody), through their own index;
 * 3. only when no row of the window may run: the head (first pending row) of every key with pending
 *    rows, found by skipping from key to key in the pending-key index, one probe per key. A key's
 *    backlog is never read, only its head; this costs one probe per key with pending rows.
 * The rows of the three are taken oldest due first, so a steady flow of rows without a key does not
 * hold back the keys behind a blocked window.
 * Every condition is a bounded index probe: the earlier rows of a key are a range of the pending-key
 * index that ends at the row (its first entry answers), a key's live runs are a range of the
 * running-key index.
 */

const PENDING = `('received', 'failed', 'processing')`;

/** How many due keyed rows the first source reads, at most, before checking their turns. */
const CLAIM_WINDOW = 16;

/**
 * The claim's text: `$1` now, `$2` lease ms, `$3` most rows, `$4` service. `t` is the quoted table,
 * `stale` the stale guard's condition over the updated row, returned with each claimed row.
 */
export function claimStatement(t: string, pg: boolean, stale: string): string {
  // Row locks on PostgreSQL: a row another worker is claiming is skipped, never waited for. Each
  // source locks its own rows, so two workers claiming at once take different rows.
  const lock = pg ? ' FOR UPDATE OF r SKIP LOCKED' : '';
  // `LIMIT $3 + 0`, not `LIMIT $3`: SQLite reads a bare parameter's value while planning (to treat
  // `IN (… LIMIT 1)` as one row), and then prepares the statement again after every new binding.
  const most = 'LIMIT $3 + 0';
  // Due: waiting and its time came, or running under an ended lease (its worker died). A running row's
  // `run_at` is the time it became due, before its claim, so `run_at <= $1` holds for every row that
  // may run and bounds the scan of the runnable indexes. The status list is each index's condition,
  // whole: SQLite uses a partial index only for a query that repeats it.
  const due = (a: string) =>
    `${a}.status IN ${PENDING} AND ${a}.run_at <= $1 AND (${a}.status <> 'processing' OR ${a}.lease_until <= $1)`;
  // No earlier row of its key pending: none with an earlier event, none of the same event received
  // before it. Two ranges of the pending-key index that end at the row, so the first entry answers;
  // SQLite cannot bound a scan with a row value `(event_at, id) < (…)` (it reads every row of the key
  // up to the event time, all of them for one body replayed).
  const first = (a: string) => {
    const pending = `SELECT 1 FROM ${t} e WHERE e.ordering_key = ${a}.ordering_key AND e.status IN ${PENDING} AND`;
    return `NOT EXISTS (${pending} e.event_at < ${a}.event_at) AND NOT EXISTS (${pending} e.event_at = ${a}.event_at AND e.id < ${a}.id)`;
  };
  // No row of its key running under a live lease (the row itself, if running, has an ended one).
  const idle = (a: string) =>
    `NOT EXISTS (SELECT 1 FROM ${t} p WHERE p.ordering_key = ${a}.ordering_key AND p.status = 'processing' AND p.lease_until > $1)`;
  const window = `SELECT w.id FROM ${t} w WHERE w.service = $4 AND w.ordering_key IS NOT NULL AND ${due('w')} ORDER BY w.run_at, w.id LIMIT ${CLAIM_WINDOW}`;
  // `due` again on `r`: on PostgreSQL, a row another claim updated and committed meanwhile is checked
  // again at its lock, on its new version (a row now running is skipped).
  const inWindow = `SELECT r.id, r.run_at, 1 AS keyed FROM ${t} r WHERE r.id IN (${window}) AND ${due('r')} AND ${first('r')} AND ${idle('r')} ORDER BY r.run_at, r.id ${most}${lock}`;
  const unkeyed = `SELECT r.id, r.run_at, 0 AS keyed FROM ${t} r WHERE r.service = $4 AND r.ordering_key IS NULL AND ${due('r')} ORDER BY r.run_at, r.id ${most}${lock}`;
  // The head of every key with pending rows, in key order: each step is one probe of the pending-key
  // index (ordered by key, then event) for its first entry past the previous key, which is the next
  // key's head, and the head's row (`ordering_key > k` implies the index's `IS NOT NULL`). PostgreSQL
  // reads the row in the same probe (LATERAL); SQLite looks it up by rowid.
  const headColumns = 'h.ordering_key, h.id, h.service, h.status, h.run_at, h.lease_until';
  const after = (a: string | undefined) =>
    `${a === undefined ? 'x.ordering_key IS NOT NULL' : `x.ordering_key > ${a}`} AND x.status IN ${PENDING} ORDER BY x.ordering_key, x.event_at, x.id LIMIT 1`;
  const start = 'NOT EXISTS (SELECT 1 FROM ready WHERE ready.keyed = 1)';
  const next = (a?: string) =>
    pg
      ? `SELECT ${headColumns} FROM ${a === undefined ? '' : 'heads, '}LATERAL (SELECT x.* FROM ${t} x WHERE ${after(a)}) h${a === undefined ? ` WHERE ${start}` : ''}`
      : `SELECT ${headColumns} FROM ${a === undefined ? '' : 'heads, '}${t} h WHERE ${a === undefined ? `${start} AND ` : ''}h.id = (SELECT x.id FROM ${t} x WHERE ${after(a)})`;
  const heads = `heads (k, id, service, status, run_at, lease_until) AS (${next()} UNION ALL ${next('heads.k')})`;
  const ready = `ready (id, run_at, keyed) AS MATERIALIZED (SELECT * FROM (${inWindow}) a UNION ALL SELECT * FROM (${unkeyed}) b)`;
  const atHead = `SELECT r.id, r.run_at FROM ${t} r WHERE r.id IN (SELECT heads.id FROM heads WHERE heads.service = $4 AND ${due('heads')}) AND ${due('r')} AND ${idle('r')} ORDER BY r.run_at, r.id ${most}${lock}`;
  // The heads are read only when no row of the window may run (their first step checks it).
  const taken = `SELECT id FROM (SELECT id, run_at FROM ready UNION ALL SELECT * FROM (${atHead}) c) u ORDER BY run_at, id ${most}`;
  return `WITH RECURSIVE ${ready}, ${heads} UPDATE ${t} SET status = 'processing', attempts = attempts + 1, fence = fence + 1, lease_until = $1 + $2 WHERE id IN (${taken}) RETURNING *, ${stale} AS stale`;
}
