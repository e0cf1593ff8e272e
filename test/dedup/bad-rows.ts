/**
 * The check every SQL store passes on rows it cannot read (written by hand or by an older version):
 * each such key is read as expired, claimed, completed and then answered as a duplicate, a claim
 * abandoned over one is settled, and the store warns once in all, naming no key.
 */
import type { DedupStore } from '@svc/webhooks';
import { expect, vi } from 'vitest';

/** Runs the check on `store`, whose table holds an unreadable row for every key of `claimable` and `abandonable`. */
export async function expectBadRowsReplaced(
  store: DedupStore,
  claimable: string[],
  abandonable: string,
): Promise<void> {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  try {
    for (const key of claimable) {
      const claim = await store.claim(key, { leaseMs: 15_000 });
      expect(claim, key).toMatchObject({ status: 'claimed' });
      if (claim.status !== 'claimed') continue;
      expect(await store.complete(key, claim.token, { ttlMs: 60_000 })).toBe(true);
      expect(await store.claim(key, { leaseMs: 15_000 })).toEqual({ status: 'completed' });
    }
    expect(await store.abandon?.(abandonable, 'abandoned-token', { leaseMs: 15_000 })).toBe(true);
    expect(await store.claim(abandonable, { leaseMs: 15_000 })).toMatchObject({ status: 'claimed' });
    expect(warn).toHaveBeenCalledTimes(1);
    const [message] = warn.mock.calls[0] as [string];
    expect(message).toMatch(/cannot read .* treated as expired/);
    for (const key of [...claimable, abandonable]) expect(message).not.toContain(key);
  } finally {
    warn.mockRestore();
  }
}
