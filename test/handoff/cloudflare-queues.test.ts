/**
 * The edge, end to end inside workerd (miniflare): a Worker bundled from the BUILT entries (`.`,
 * `./d1`, `./cloudflare-queues`) for a browser-neutral platform with nothing external but
 * `cloudflare:workers`, so an import of a Node API fails the bundle. Its D1 store, hand-off target,
 * consumer and receivers are created in the Worker's global scope, where workerd refuses random
 * values, timers and I/O: creating them does none. Real D1, real queues with a real consumer, retries
 * and a dead-letter queue.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, root } from '../package/dist.js';
import { MAIL_SECRET, mailDelivery } from '../receivers/support.js';

const WORKER = (dist: string) => `
import { env } from 'cloudflare:workers';
import { createMailReceiver } from '${dist}/index.js';
import { createD1Store } from '${dist}/d1.js';
import { createCloudflareQueueConsumer, createCloudflareQueueHandoff } from '${dist}/cloudflare-queues.js';

// Global scope: workerd throws here on a random value, a timer or I/O.
const dedup = createD1Store({ database: env.DB, createTable: true });
const handoff = createCloudflareQueueHandoff({ queue: env.WEBHOOKS });
const receiver = (options) =>
  createMailReceiver({ secret: env.MAIL_SECRET, dedup, ...options }).on('bounced', async (event, { attempt }) => {
    await env.DB.prepare('INSERT INTO runs (delivery_id, attempt) VALUES (?1, ?2)')
      .bind(event.deliveryId, attempt ?? 0)
      .run();
    if (event.deliveryId.startsWith('flaky') && attempt === 1) throw new Error('flaky handler');
    if (event.deliveryId.startsWith('broken')) throw new Error('broken handler');
    if (event.deliveryId.startsWith('slow')) {
      // Past the slow consumer's timeoutMs: still running when queue() returns.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await env.DB.prepare('INSERT INTO late (delivery_id) VALUES (?1)').bind(event.deliveryId).run();
    }
  });
const direct = receiver({});
const queued = receiver({ handoff });
const queuedSlow = receiver({ handoff: createCloudflareQueueHandoff({ queue: env.WEBHOOKS_SLOW }) });
const consumeSlow = createCloudflareQueueConsumer({ receiver: direct, timeoutMs: 300, backoffSeconds: 0 });
const settled = [];
const consume = createCloudflareQueueConsumer({
  receiver: direct,
  deadLetterQueue: env.WEBHOOKS_DEAD,
  backoffSeconds: 0,
  onJob: (info) => settled.push(info),
});

export default {
  fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === '/direct') return direct.handle(request);
    if (pathname === '/queued') return queued.handle(request);
    if (pathname === '/queued-slow') return queuedSlow.handle(request);
    return new Response('not found', { status: 404 });
  },
  async queue(batch, _env, ctx) {
    if (batch.queue === 'webhooks-slow') return consumeSlow(batch, ctx);
    if (batch.queue === 'webhooks-dead') {
      for (const message of batch.messages) {
        await env.DB.prepare('INSERT INTO dead (body) VALUES (?1)').bind(JSON.stringify(message.body)).run();
        message.ack();
      }
      return;
    }
    await consume(batch);
    for (const { id, attempt, result } of settled.splice(0)) {
      const body = batch.messages.find((message) => message.id === id)?.body;
      await env.DB.prepare('INSERT INTO jobs (delivery_id, attempt, result) VALUES (?1, ?2, ?3)')
        .bind(body?.deliveryId ?? null, attempt, result)
        .run();
    }
  },
};
`;

let mf: Miniflare;
let db: Awaited<ReturnType<Miniflare['getD1Database']>>;

beforeAll(async () => {
  const dist = await buildDist();
  const bundle = await build({
    stdin: { contents: WORKER(dist), resolveDir: root, loader: 'js', sourcefile: 'worker.js' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'import'],
    target: 'es2022',
    external: ['cloudflare:*'], // nothing else: a `node:` import would fail here
    write: false,
    logLevel: 'silent',
    nodePaths: [join(root, 'node_modules')],
  });
  mf = new Miniflare({
    modules: true,
    script: bundle.outputFiles[0]!.text,
    compatibilityDate: '2025-06-01',
    bindings: { MAIL_SECRET },
    d1Databases: ['DB'],
    queueProducers: { WEBHOOKS: 'webhooks', WEBHOOKS_DEAD: 'webhooks-dead', WEBHOOKS_SLOW: 'webhooks-slow' },
    queueConsumers: {
      webhooks: { maxBatchTimeout: 0, maxRetries: 3, deadLetterQueue: 'webhooks-dead' },
      'webhooks-dead': { maxBatchTimeout: 0 },
      'webhooks-slow': { maxBatchTimeout: 0, maxRetries: 1 },
    },
  });
  db = await mf.getD1Database('DB');
  await db.batch([
    db.prepare('CREATE TABLE runs (delivery_id TEXT, attempt INTEGER)'),
    db.prepare('CREATE TABLE jobs (delivery_id TEXT, attempt INTEGER, result TEXT)'),
    db.prepare('CREATE TABLE dead (body TEXT)'),
    db.prepare('CREATE TABLE late (delivery_id TEXT)'),
  ]);
}, 180_000);

afterAll(() => mf?.dispose());

function post(path: string, delivery: ReturnType<typeof mailDelivery>) {
  return mf.dispatchFetch(`http://worker${path}`, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
  });
}

const rows = async <T>(sql: string, ...params: unknown[]): Promise<T[]> =>
  ((
    await db
      .prepare(sql)
      .bind(...params)
      .all()
  ).results ?? []) as T[];
const attempts = (id: string) =>
  rows<{ attempt: number }>('SELECT attempt FROM runs WHERE delivery_id = ?1 ORDER BY attempt', id).then(
    (r) => r.map((row) => row.attempt),
  );
const jobs = (id: string) =>
  rows<{ attempt: number; result: string }>(
    'SELECT attempt, result FROM jobs WHERE delivery_id = ?1 ORDER BY rowid',
    id,
  );

describe('direct mode in workerd with the D1 store', () => {
  it('handles a delivery once; its copy is a duplicate', async () => {
    const delivery = mailDelivery('bounced', { deliveryId: `dlv_${randomUUID()}` });
    const first = await post('/direct', delivery);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true });
    const again = await post('/direct', delivery);
    expect(await again.json()).toEqual({ ok: true, result: 'duplicate' });
    expect(await attempts(delivery.deliveryId)).toEqual([0]);
  });
});

describe('hand-off on Cloudflare Queues in workerd', () => {
  it('acknowledges once queued; the consumer runs the handler once, a resent copy is a duplicate', async () => {
    const delivery = mailDelivery('bounced', { deliveryId: `dlv_${randomUUID()}` });
    const response = await post('/queued', delivery);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, result: 'queued' });
    await expect
      .poll(() => jobs(delivery.deliveryId), { timeout: 15_000 })
      .toEqual([{ attempt: 1, result: 'handled' }]);
    // Queues keeps no message id per delivery: the copy is a second message, answered queued again;
    // its run finds the completed claim.
    expect(await (await post('/queued', delivery)).json()).toEqual({ ok: true, result: 'queued' });
    await expect
      .poll(() => jobs(delivery.deliveryId), { timeout: 15_000 })
      .toEqual([
        { attempt: 1, result: 'handled' },
        { attempt: 1, result: 'duplicate' },
      ]);
    expect(await attempts(delivery.deliveryId)).toEqual([1]);
  });

  it('retries a failed run with message.retry(); the next attempt handles it', async () => {
    const delivery = mailDelivery('bounced', { deliveryId: `flaky_${randomUUID()}` });
    expect((await post('/queued', delivery)).status).toBe(200);
    await expect
      .poll(() => jobs(delivery.deliveryId), { timeout: 15_000 })
      .toEqual([
        { attempt: 1, result: 'retried' },
        { attempt: 2, result: 'handled' },
      ]);
    expect(await attempts(delivery.deliveryId)).toEqual([1, 2]);
  });

  it("a run that always fails ends in the queue's dead-letter queue after its retries", async () => {
    const delivery = mailDelivery('bounced', { deliveryId: `broken_${randomUUID()}` });
    expect((await post('/queued', delivery)).status).toBe(200);
    await expect
      .poll(
        () =>
          rows<{ body: string }>(
            "SELECT body FROM dead WHERE body LIKE '%' || ?1 || '%'",
            delivery.deliveryId,
          ),
        {
          timeout: 20_000,
        },
      )
      .toHaveLength(1);
    expect(await attempts(delivery.deliveryId)).toEqual([1, 2, 3, 4]); // maxRetries 3
    const [dead] = await rows<{ body: string }>(
      "SELECT body FROM dead WHERE body LIKE '%' || ?1 || '%'",
      delivery.deliveryId,
    );
    // The job, unchanged: sending it back to the work queue re-drives it.
    expect(JSON.parse(dead!.body)).toMatchObject({ v: 2, service: 'mail', deliveryId: delivery.deliveryId });
  });

  it('sends a job no retry can fix to the dead-letter queue at once: forged, or without a handler', async () => {
    const producer = await mf.getQueueProducer('WEBHOOKS');
    const real = mailDelivery('delivered', { deliveryId: `nohandler_${randomUUID()}` });
    // Acknowledged for the workers ('delivered' has no handler in them): refused there as no_handler.
    expect(await (await post('/queued', real)).json()).toEqual({ ok: true, result: 'queued' });
    const forged = {
      v: 2,
      service: 'mail',
      deliveryId: `forged_${randomUUID()}`,
      event: 'bounced',
      dedupKey: 'mail:delivery:forged',
      receivedAt: Date.now(),
      secretIndex: 0,
      headers: {},
      body: btoa('{}'),
      mac: '0'.repeat(64),
    };
    await producer.send(forged, { contentType: 'json' });
    for (const id of [real.deliveryId, forged.deliveryId]) {
      await expect
        .poll(() => jobs(id), { timeout: 15_000 })
        .toEqual([{ attempt: 1, result: 'dead-lettered' }]);
      await expect
        .poll(() => rows("SELECT body FROM dead WHERE body LIKE '%' || ?1 || '%'", id), { timeout: 15_000 })
        .toHaveLength(1);
    }
    expect(await attempts(forged.deliveryId)).toEqual([]);
  });

  it('a handler still running at timeoutMs when queue() returns goes on (ctx.waitUntil): it finishes and its claim completes', async () => {
    const delivery = mailDelivery('bounced', { deliveryId: `slow_${randomUUID()}` });
    expect((await post('/queued-slow', delivery)).status).toBe(200);
    // queue() returned at 300 ms with handler_timeout (the message retried); the handler goes on.
    await expect
      .poll(() => rows('SELECT delivery_id FROM late WHERE delivery_id = ?1', delivery.deliveryId), {
        timeout: 15_000,
      })
      .toHaveLength(1);
    // Its outcome recorded after queue() returned: the claim is completed, so no retry runs it again.
    await expect
      .poll(
        () =>
          rows<{ completed: number }>(
            "SELECT completed FROM webhook_dedup WHERE key = 'mail:delivery:' || ?1",
            delivery.deliveryId,
          ),
        { timeout: 5_000 },
      )
      .toEqual([{ completed: 1 }]);
    expect(await attempts(delivery.deliveryId)).toEqual([1]);
  });

  it('bounds bodies by what a message holds: 64 KiB by default, 413 above', async () => {
    const big = mailDelivery('bounced', {
      deliveryId: `big_${randomUUID()}`,
      payload: {
        event: 'bounced',
        client_id: 'c_1',
        message_id: 'm_1',
        to: 'ana@example.com',
        provider: 'x'.repeat(70_000),
      },
    });
    const response = await post('/queued', big);
    expect(response.status).toBe(413);
    await response.arrayBuffer();
  });
});
