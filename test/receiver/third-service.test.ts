/**
 * A third service (test/support/acme/) through the generic receiver, the Express adapter and the
 * hand-off job codec. Signatures are computed with node:crypto.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createExpressMiddleware } from '@svc/webhooks/express';
import express from 'express';
import { describe, expect, it } from 'vitest';
import type { HandoffJob } from '../../src/handoff/job/types.js';
import { jobError } from '../../src/handoff/job-action.js';
import { ACME_HEADERS, createAcmeReceiver } from '../support/acme/index.js';

const SECRET = 'acme_secret_0123456789abcdef0123';

function acmeDelivery(deliveryId: string, orderId: string, name = 'order.placed') {
  const body = JSON.stringify({ order_id: orderId, total_cents: 1299 });
  return {
    body: new TextEncoder().encode(body),
    headers: {
      [ACME_HEADERS.signature]: `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
      [ACME_HEADERS.deliveryId]: deliveryId,
      [ACME_HEADERS.event]: name,
      'content-type': 'application/json',
    },
  };
}

describe('a third service through the generic pipeline', () => {
  it('verifies, parses, deduplicates by its own key and names itself in every verdict', async () => {
    const orders: string[] = [];
    const receiver = createAcmeReceiver({ secret: SECRET }).on('order.placed', (event, { dedupKey }) => {
      orders.push(`${event.order.order_id}@${dedupKey}`);
    });
    const first = await receiver.receive({ ...acmeDelivery('a1', 'o_1'), method: 'POST' });
    expect(first).toEqual({ kind: 'handled', service: 'acme', deliveryId: 'a1', event: 'order.placed' });
    // Another delivery of the same order: a duplicate by the service's own key.
    expect(await receiver.receive(acmeDelivery('a2', 'o_1'))).toMatchObject({
      kind: 'duplicate',
      service: 'acme',
    });
    const forged = {
      ...acmeDelivery('a3', 'o_2'),
      body: new TextEncoder().encode('{"order_id":"o_2","total_cents":1}'),
    };
    expect(await receiver.receive(forged)).toMatchObject({ kind: 'refused', code: 'signature_mismatch' });
    expect(orders).toEqual(['o_1@acme:order:o_1']);
  });

  it('is served by the Express adapter like the built-in services', async () => {
    const receiver = createAcmeReceiver({ secret: SECRET }).on('order.placed', () => {});
    const app = express();
    app.post('/webhooks/acme', createExpressMiddleware(receiver));
    const server = createServer(app).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/acme`;
    try {
      const delivery = acmeDelivery('e1', 'o_9');
      const post = () => fetch(url, { method: 'POST', body: delivery.body, headers: delivery.headers });
      const ok = await post();
      expect([ok.status, await ok.json()]).toEqual([200, { ok: true }]);
      const again = await post();
      expect(await again.json()).toEqual({ ok: true, result: 'duplicate' });
      const bad = await fetch(url, {
        method: 'POST',
        body: '{}',
        headers: { [ACME_HEADERS.signature]: 'sha256=00' },
      });
      expect(bad.status).toBe(401);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('hands off through the job codec, and a worker of the same service runs the job', async () => {
    const jobs: HandoffJob[] = [];
    const front = createAcmeReceiver({
      secret: SECRET,
      handoff: {
        enqueue: async (job) => {
          jobs.push(job);
          return 'enqueued';
        },
      },
    });
    expect(await front.receive(acmeDelivery('h1', 'o_5'))).toMatchObject({ kind: 'queued', service: 'acme' });
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ service: 'acme', dedupKey: 'acme:order:o_5', event: 'order.placed' });
    const ran: string[] = [];
    const worker = createAcmeReceiver({ secret: SECRET }).on('order.placed', (event) => {
      ran.push(event.order.order_id);
    });
    const verdict = await worker.runJob(JSON.parse(JSON.stringify(jobs[0])));
    expect(verdict).toMatchObject({ kind: 'handled', service: 'acme' });
    expect(jobError(verdict)).toBeUndefined();
    expect(ran).toEqual(['o_5']);
    // A job of another service is refused and dead-lettered.
    const foreign = await worker.runJob({ ...jobs[0], service: 'mail' });
    expect(foreign).toMatchObject({ kind: 'refused', code: 'job_invalid' });
    expect(jobError(foreign)?.code).toBe('job_invalid');
  });
});
