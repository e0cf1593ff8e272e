/**
 * Direct mode's statements in the app's transaction. Transaction adapters run text without
 * parameters (`execute`), so only whole numbers are inlined, after a check; the table name is the
 * inbox's checked, quoted one.
 */
function wholeNumbers(values: readonly number[]): void {
  for (const n of values) {
    if (!Number.isSafeInteger(n)) throw new TypeError(`inbox: ${String(n)} is not a whole number`);
  }
}

/** The row a direct run may take. */
export interface DirectRow {
  /** The inbox's checked, quoted table name. */
  readonly table: string;
  readonly dialect: 'postgres' | 'sqlite';
  /** The stale guard's condition over the statement's own row (the inbox's `stale`). */
  readonly stale: string;
  readonly id: number;
  /** The fencing token the row was read at. */
  readonly fence: number;
  readonly now: number;
}

/**
 * The row `id` at `fence` when it may run: waiting, or `processing` under an ended lease (a worker
 * died). On PostgreSQL a row another transaction holds is skipped (no wait).
 */
function runnable({ table, dialect, id, fence, now }: DirectRow): string {
  wholeNumbers([id, fence, now]);
  const lock = dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
  return `id IN (SELECT id FROM ${table} WHERE id = ${id} AND fence = ${fence} AND (status IN ('received', 'failed') OR (status = 'processing' AND lease_until <= ${now}))${lock})`;
}

/**
 * Claims the row for this transaction unless the stale guard holds (an event older than one of its
 * key already handled): one statement for a row that runs. No row returned means the row is stale,
 * another run has it, or it moved on; {@link directSupersedeStatement} then tells which.
 */
export function directClaimStatement(row: DirectRow, leaseMs: number): string {
  wholeNumbers([leaseMs]);
  return `UPDATE ${row.table} SET status = 'processing', attempts = attempts + 1, fence = fence + 1, lease_until = ${row.now + leaseMs} WHERE ${runnable(row)} AND NOT (${row.stale}) RETURNING id`;
}

/**
 * The stale guard, after a claim that took nothing: marks the row `superseded` (a run of it, fenced,
 * that runs no handler) when it may run and is stale. No row returned: another run has it.
 */
export function directSupersedeStatement(row: DirectRow): string {
  return `UPDATE ${row.table} SET status = 'superseded', attempts = attempts + 1, fence = fence + 1, lease_until = NULL, handled_at = ${row.now} WHERE ${runnable(row)} AND (${row.stale}) RETURNING id`;
}
