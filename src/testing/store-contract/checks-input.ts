/**
 * The contract's checks of what a store accepts: keys of any characters up to 512 of them, and bad
 * arguments refused with `options_invalid` before anything is written.
 */
import { claimed, rejects, same } from './assert.js';
import { type Check, LEASE, TTL } from './types.js';

/** Longest key every store accepts (src/dedup/validate.ts); receivers never pass more than 200. */
const MAX_KEY = 512;

export const inputChecks: Check[] = [
  {
    name: 'keeps keys apart, whatever characters they hold',
    async run({ store }) {
      const keys = [
        'mail:msg:<a@b>:delivered',
        'crm:delivery:ü-ß-✓',
        `x${'y'.repeat(500)}`,
        "it's; drop",
        'a b\nc',
      ];
      for (const key of keys)
        claimed(await store.claim(key, { leaseMs: LEASE }), `claim of ${JSON.stringify(key)}`);
      for (const key of keys) {
        same(
          (await store.claim(key, { leaseMs: LEASE })).status,
          'in_progress',
          `claim again of ${JSON.stringify(key)}`,
        );
      }
    },
  },
  {
    name: `accepts keys of up to ${MAX_KEY} characters and refuses longer ones with options_invalid`,
    async run({ store }) {
      const longest = `crm:${'é'.repeat(MAX_KEY - 4)}`; // 2 bytes a character in UTF-8
      const { token } = claimed(
        await store.claim(longest, { leaseMs: LEASE }),
        `claim of a ${MAX_KEY}-character key`,
      );
      same(
        await store.complete(longest, token, { ttlMs: TTL }),
        true,
        `complete of a ${MAX_KEY}-character key`,
      );
      same(await store.claim(longest, { leaseMs: LEASE }), { status: 'completed' }, 'claim of it again');
      const tooLong = `${longest}x`;
      await rejects(
        store.claim(tooLong, { leaseMs: LEASE }),
        'options_invalid',
        `claim of a ${MAX_KEY + 1}-character key`,
      );
      await rejects(store.complete(tooLong, token, { ttlMs: TTL }), 'options_invalid', 'complete of it');
      await rejects(store.release(tooLong, token), 'options_invalid', 'release of it');
    },
  },
  {
    name: 'rejects bad arguments with options_invalid (500)',
    async run({ store }) {
      await rejects(store.claim('', { leaseMs: LEASE }), 'options_invalid', 'claim of an empty key', 500);
      await rejects(store.claim('k', { leaseMs: 0 }), 'options_invalid', 'claim with leaseMs 0');
      await rejects(store.claim('k', { leaseMs: 1.5 }), 'options_invalid', 'claim with leaseMs 1.5');
      await rejects(
        store.claim('k', { leaseMs: LEASE, token: '' }),
        'options_invalid',
        'claim with an empty token',
      );
      await rejects(store.complete('k', 'tok', { ttlMs: -1 }), 'options_invalid', 'complete with ttlMs -1');
      await rejects(store.release('k', ''), 'options_invalid', 'release with an empty token');
      if (store.abandon) {
        await rejects(
          store.abandon('k', '', { leaseMs: LEASE }),
          'options_invalid',
          'abandon with an empty token',
        );
      }
      // Nothing was written by the refused calls.
      claimed(await store.claim('k', { leaseMs: LEASE }), 'claim after the refused calls');
    },
  },
];
