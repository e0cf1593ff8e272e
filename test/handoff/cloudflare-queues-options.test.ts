/**
 * The Cloudflare Queues entry's checks, in Node: misconfiguration throws when created, the body bound
 * a Queues message imposes reaches the receiver's options, and a job too large for a message is
 * refused before it is sent. Runs in workerd: cloudflare-queues.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { createMailReceiver } from '@svc/webhooks';
import { createCloudflareQueueConsumer, createCloudflareQueueHandoff } from '@svc/webhooks/cloudflare-queues';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_SECRET, mailDelivery } from '../receivers/support.js';

let mf: Miniflare;
let queue: Awaited<ReturnType<Miniflare['getQueueProducer']>>;
beforeAll(async () => {
  mf = new Miniflare({
    modules: true,
    script: 'export default { async queue(batch) { batch.ackAll(); } };',
    queueProducers: { WEBHOOKS: 'webhooks' },
    queueConsumers: { webhooks: { maxBatchTimeout: 0 } },
  });
  queue = await mf.getQueueProducer('WEBHOOKS');
});
afterAll(() => mf?.dispose());

describe('createCloudflareQueueHandoff', () => {
  it('needs a producer binding', () => {
    expect(() => createCloudflareQueueHandoff({ queue: {} as never })).toThrow(/producer binding/);
  });

  it("bounds a receiver's bodies by what a message holds: 64 KiB by default, a larger bound refused", async () => {
    const handoff = createCloudflareQueueHandoff({ queue });
    const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff });
    // A valid bounced event of exactly `bytes` bytes (padding in `response`).
    const padded = (bytes: number) => {
      const payload = {
        event: 'bounced',
        client_id: 'c',
        message_id: 'm',
        to: 'a@b.co',
        provider: 'p',
        response: '',
      };
      payload.response = 'x'.repeat(bytes - JSON.stringify(payload).length);
      const delivery = mailDelivery('bounced', { deliveryId: `dlv_${randomUUID()}`, payload });
      expect(delivery.body.length).toBe(bytes);
      return receiver.receive({ body: delivery.body, headers: delivery.headers, method: 'POST' });
    };
    expect((await padded(65_536)).kind).toBe('queued');
    expect(await padded(65_537)).toMatchObject({ kind: 'refused', code: 'body_too_large' });
    expect(() => createMailReceiver({ secret: MAIL_SECRET, handoff, maxBodyBytes: 65_537 })).toThrow(
      /maxBodyBytes \(65537\) is above 65536, the largest body a hand-off job carries on this queue engine/,
    );
    expect(() => createMailReceiver({ secret: MAIL_SECRET, handoff, maxBodyBytes: 4_096 })).not.toThrow();
  });

  it('refuses a job a message cannot hold, before sending it', async () => {
    const handoff = createCloudflareQueueHandoff({ queue });
    const job = {
      v: 2 as const,
      service: 'mail',
      deliveryId: 'd_1',
      event: 'e'.repeat(130_000), // only a header far beyond any real one gets the job this large
      dedupKey: 'mail:delivery:d_1',
      receivedAt: 0,
      secretIndex: 0,
      headers: {},
      body: '',
      mac: '0'.repeat(64),
    };
    await expect(handoff.enqueue(job, { signal: new AbortController().signal })).rejects.toThrow(
      /a Cloudflare Queues message holds 128000/,
    );
  });
});

describe('createCloudflareQueueConsumer', () => {
  const receiver = createMailReceiver({ secret: MAIL_SECRET });

  it('throws options_invalid for what it cannot run with', () => {
    const invalid = { name: 'WebhookError', code: 'options_invalid' };
    expect(() => createCloudflareQueueConsumer({ receiver: {} as never })).toThrow(
      expect.objectContaining(invalid),
    );
    for (const backoffSeconds of [-1, 1.5, 43_201, Number.NaN]) {
      expect(() => createCloudflareQueueConsumer({ receiver, backoffSeconds })).toThrow(
        expect.objectContaining(invalid),
      );
    }
    expect(() => createCloudflareQueueConsumer({ receiver, deadLetterQueue: {} as never })).toThrow(
      /deadLetterQueue/,
    );
    expect(() => createCloudflareQueueConsumer({ receiver, onJob: 'x' as never })).toThrow(/onJob/);
    expect(() =>
      createCloudflareQueueConsumer({ receiver, deadLetterQueue: queue, backoffSeconds: 0 }),
    ).not.toThrow();
  });

  it("refuses a handler budget the receiver's lease does not outlast when created, not on every message", () => {
    const leased = createMailReceiver({ secret: MAIL_SECRET, leaseMs: 5_000, timeoutMs: 2_000 });
    for (const timeoutMs of [5_000, 0, 1.5])
      expect(() => createCloudflareQueueConsumer({ receiver: leased, timeoutMs })).toThrow(
        expect.objectContaining({ code: 'options_invalid', message: expect.stringContaining('timeoutMs') }),
      );
    expect(() => createCloudflareQueueConsumer({ receiver: leased, timeoutMs: 4_999 })).not.toThrow();
  });
});
