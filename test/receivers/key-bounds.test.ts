/**
 * Delivery ids and dedup keys are bounded the same way on every store (memory, Redis via ioredis and
 * node-redis, Postgres via pg and PGlite): an id of the maximum length is handled, a longer one is
 * 400 `delivery_id_invalid`, and a huge key (a long `message_id`, a user key function) still claims and
 * completes because it is hashed. Postgres cannot index a key over ~2.7 KB: without hashing every
 * claim of such a key fails (503) on every retry.
 */

import { randomBytes } from 'node:crypto';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { expect, it } from 'vitest';
import { MAX_DELIVERY_ID_LENGTH } from '../../src/core/delivery-id.js';
import { MAX_DEDUP_KEY_LENGTH } from '../../src/dedup/validate.js';
import { forEachStore } from '../support/stores.js';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from './support.js';

// Random, so Postgres cannot compress it under its index limit (a repeated character would fit).
const incompressible = (chars: number) => randomBytes(chars / 2).toString('hex');
const HUGE_MESSAGE_ID = `<${incompressible(10_000)}@mail.example>`;
const HUGE_KEY = incompressible(10_000);
let seq = 0;
// Visible ASCII of exactly `length` characters, unique per call so stores never share a key.
const idOf = (length: number) => `${++seq}~!#$%&'*+-.^_\`|`.padEnd(length, 'Z');

forEachStore((kind) => {
  it('an id of the maximum length is handled once; one character more is 400 delivery_id_invalid', async () => {
    const receiver = createMailReceiver({ secret: MAIL_SECRET, dedup: await kind.create() });
    let runs = 0;
    receiver.on('delivered', () => void runs++);
    const longest = mailDelivery('delivered', { deliveryId: idOf(MAX_DELIVERY_ID_LENGTH) });
    expect(await deliver(receiver, longest)).toMatchObject({ status: 200, kind: 'handled' });
    expect(await deliver(receiver, longest)).toMatchObject({ status: 200, kind: 'duplicate' });
    const over = mailDelivery('delivered', { deliveryId: idOf(MAX_DELIVERY_ID_LENGTH + 1) });
    expect(await deliver(receiver, over)).toMatchObject({ status: 400, code: 'delivery_id_invalid' });
    const huge = mailDelivery('delivered', { deliveryId: idOf(8_000) });
    expect(await deliver(receiver, huge)).toMatchObject({ status: 400, code: 'delivery_id_invalid' });
    expect(runs).toBe(1);
  });

  it('a huge message_id under message-event dedup claims and completes (then answers duplicate)', async () => {
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      dedup: await kind.create(),
      dedupKey: 'message-event',
    });
    let runs = 0;
    receiver.on('bounced', () => void runs++);
    const first = mailDelivery('bounced', { messageId: HUGE_MESSAGE_ID });
    expect(await deliver(receiver, first)).toMatchObject({ status: 200, kind: 'handled' });
    const again = mailDelivery('bounced', { messageId: HUGE_MESSAGE_ID });
    expect(again.deliveryId).not.toBe(first.deliveryId);
    expect(await deliver(receiver, again)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(runs).toBe(1);
  });

  it('a user key function returning 10,000 characters claims and completes, on both receivers', async () => {
    const dedup = await kind.create();
    const mail = createMailReceiver({
      secret: MAIL_SECRET,
      dedup,
      dedupKey: (e) => `${e.name}:${HUGE_KEY}`,
    });
    const crm = createCrmReceiver({
      secret: CRM_SECRET,
      dedup,
      dedupKey: (e) => `${e.name}:${HUGE_KEY}`,
    });
    mail.on('opened', () => {});
    crm.on('deal.won', () => {});
    const opened = mailDelivery('opened');
    expect(await deliver(mail, opened)).toMatchObject({ status: 200, kind: 'handled' });
    expect(await deliver(mail, mailDelivery('opened'))).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(await deliver(crm, crmDelivery('deal.won'))).toMatchObject({ status: 200, kind: 'handled' });
    expect(await deliver(crm, crmDelivery('deal.won'))).toMatchObject({ status: 200, kind: 'duplicate' });
  });

  it('a CRM body id that is not a UUID is 400 delivery_id_invalid', async () => {
    const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: await kind.create() });
    receiver.on('deal.won', () => {});
    const delivery = crmDelivery('deal.won', { deliveryId: 'x'.repeat(8_000) });
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 400, code: 'delivery_id_invalid' });
  });

  it(`the store itself takes keys of ${MAX_DEDUP_KEY_LENGTH} characters and refuses longer ones`, async () => {
    const store = await kind.create();
    const key = `k${seq++}✓`.padEnd(MAX_DEDUP_KEY_LENGTH, 'é');
    const claim = await store.claim(key, { leaseMs: 30_000 });
    if (claim.status !== 'claimed') throw new Error(`expected claimed, got ${claim.status}`);
    expect(await store.complete(key, claim.token, { ttlMs: 60_000 })).toBe(true);
    expect(await store.claim(key, { leaseMs: 30_000 })).toEqual({ status: 'completed' });
    await expect(store.claim(`${key}é`, { leaseMs: 30_000 })).rejects.toMatchObject({
      code: 'options_invalid',
    });
  });
});
