import type { ClaimResult } from './types.js';

/** A key's row as a SQL store's claim statement left it, when that claim did not win. */
export interface ClaimRow {
  /** The token of the claim that holds it (or of an abandoned one, its marker); none once completed. */
  token: string | null;
  /** When the lease or the completed record ends (epoch ms of the database's clock). */
  expiresAt: number;
  completed: boolean;
  /** The database's time when it read the row. */
  now: number;
}

/**
 * The answer to a claim by `token` that did not win, from the row it found; `undefined` when the
 * row's time ended in between (the caller claims again). The same claim sent again holds its lease;
 * a token abandoned before its claim ran must not run (DedupStore.abandon); another live claim is in
 * progress, a live completed record a duplicate.
 */
export function answerFromRow(row: ClaimRow, token: string): ClaimResult | undefined {
  const { expiresAt, now } = row;
  if (row.token === token && !row.completed) {
    if (expiresAt > now) return { status: 'claimed', token, leaseEndsAt: expiresAt };
    return { status: 'in_progress', leaseEndsAt: now };
  }
  if (expiresAt > now) {
    return row.completed ? { status: 'completed' } : { status: 'in_progress', leaseEndsAt: expiresAt };
  }
  return undefined;
}
