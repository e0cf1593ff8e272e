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

/** `text` with its `$n` parameters replaced by the whole numbers `params[n - 1]`. */
export function inlineNumbers(text: string, params: readonly number[]): string {
  wholeNumbers(params);
  return text.replace(/\$(\d+)/g, (_, n: string) => String(params[Number(n) - 1]));
}

/**
 * Claims the row `id` at `fence` for this transaction: it may run when waiting, or `processing` under
 * an ended lease (a worker died). On PostgreSQL a row another transaction holds is skipped (no wait):
 * no row returned means another run has it, or it moved on.
 */
export function directClaimStatement(
  table: string,
  dialect: 'postgres' | 'sqlite',
  id: number,
  fence: number,
  now: number,
  leaseMs: number,
): string {
  wholeNumbers([id, fence, now, leaseMs]);
  const lock = dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
  return `UPDATE ${table} SET status = 'processing', attempts = attempts + 1, fence = fence + 1, lease_until = ${now + leaseMs} WHERE id IN (SELECT id FROM ${table} WHERE id = ${id} AND fence = ${fence} AND (status IN ('received', 'failed') OR (status = 'processing' AND lease_until <= ${now}))${lock}) RETURNING id`;
}

/** The stale guard of a claimed row, in the transaction: the worker's `supersede` (`$1` id, `$2` fence, `$3` now), inlined. */
export function directSupersedeStatement(supersede: string, id: number, fence: number, now: number): string {
  return inlineNumbers(supersede, [id, fence, now]);
}
