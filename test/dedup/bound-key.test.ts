/**
 * Bounded dedup keys: long keys are replaced by their SHA-256, the same on Node and on runtimes
 * without node:crypto. Expected digests come from node:crypto, never from the library.
 */
import { createHash } from 'node:crypto';
import type { MailWebhookEvent } from '@svc/webhooks';
import { createMemoryStore } from '@svc/webhooks';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { crmDedupKeyOf } from '../../src/crm/dedup-key.js';
import { boundDedupKey, DEDUP_KEY_HASH_ABOVE } from '../../src/dedup/bound-key.js';
import { dedupKeyOfDeliveryId } from '../../src/dedup/key-strategy.js';
import { sha256HexJs } from '../../src/dedup/sha256.js';
import { MAX_DEDUP_KEY_LENGTH } from '../../src/dedup/validate.js';
import { mailDedupKeyOf } from '../../src/mail/dedup-key.js';
import { resetNodeCryptoCache } from '../../src/verify/node-crypto.js';

const nodeSha256 = (text: string | Uint8Array) => createHash('sha256').update(text).digest('hex');

function withoutNodeCrypto<T>(run: () => T): T {
  // What getNodeCrypto() sees on an edge runtime: no node:crypto, Web Crypto only.
  const global = globalThis as { EdgeRuntime?: string };
  global.EdgeRuntime = 'edge-runtime';
  resetNodeCryptoCache();
  try {
    return run();
  } finally {
    delete global.EdgeRuntime;
    resetNodeCryptoCache();
  }
}

afterEach(() => resetNodeCryptoCache());

describe('the plain JavaScript SHA-256 (runtimes without node:crypto)', () => {
  it.each([0, 1, 55, 56, 63, 64, 65, 119, 120, 1_000, 100_000])('matches node:crypto for %i bytes', (n) => {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 131 + 7) & 0xff);
    expect(sha256HexJs(bytes)).toBe(nodeSha256(bytes));
  });

  it('matches node:crypto for any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(sha256HexJs(bytes)).toBe(nodeSha256(bytes));
      }),
      { numRuns: 300 },
    );
  });
});

describe('boundDedupKey', () => {
  const long = `mail:message:delivered:${'m'.repeat(10_000)}✓`;

  it('keeps keys up to the threshold and hashes longer ones, on Node and without node:crypto', () => {
    const atLimit = `mail:${'k'.repeat(DEDUP_KEY_HASH_ABOVE - 5)}`;
    expect(boundDedupKey('mail', atLimit)).toBe(atLimit);
    const expected = `mail:sha256:${nodeSha256(long)}`;
    expect(boundDedupKey('mail', long)).toBe(expected);
    expect(withoutNodeCrypto(() => boundDedupKey('mail', long))).toBe(expected);
    expect(expected.length).toBeLessThanOrEqual(DEDUP_KEY_HASH_ABOVE);
  });

  it('bounds every key strategy of both receivers', () => {
    const event = {
      service: 'mail',
      known: true,
      name: 'delivered',
      deliveryId: 'd'.repeat(256),
      payload: { client_id: 'c', message_id: 'm'.repeat(10_000), to: 'a@b', provider: 'p' },
      secretIndex: 0,
    } as unknown as MailWebhookEvent;
    const keys = [
      dedupKeyOfDeliveryId('mail', 'd'.repeat(256)),
      mailDedupKeyOf('delivery-id')(event),
      mailDedupKeyOf('message-event')(event),
      mailDedupKeyOf(() => 'u'.repeat(10_000))(event),
      crmDedupKeyOf(() => 'u'.repeat(10_000))(event as never),
    ];
    for (const key of keys) expect(key.length).toBeLessThanOrEqual(DEDUP_KEY_HASH_ABOVE);
    expect(keys[2]).toBe(`mail:sha256:${nodeSha256(`mail:message:delivered:${'m'.repeat(10_000)}`)}`);
    expect(keys[4]).toMatch(/^crm:sha256:[0-9a-f]{64}$/);
    // Short keys read as before.
    expect(dedupKeyOfDeliveryId('mail', 'dlv_1')).toBe('mail:delivery:dlv_1');
  });
});

describe('stores refuse keys past MAX_DEDUP_KEY_LENGTH', () => {
  it('memory store: 512 characters claim and complete; 513 is options_invalid', async () => {
    const store = createMemoryStore();
    const claim = await store.claim('k'.repeat(MAX_DEDUP_KEY_LENGTH), { leaseMs: 1_000 });
    expect(claim.status).toBe('claimed');
    await expect(store.claim('k'.repeat(MAX_DEDUP_KEY_LENGTH + 1), { leaseMs: 1_000 })).rejects.toMatchObject(
      {
        code: 'options_invalid',
      },
    );
  });
});
