/**
 * The NATS JetStream hand-off against Debian's nats-server (JetStream on, a store directory of its
 * own): the reference emitter end to end through a handler outage, duplicates dropped by
 * `Nats-Msg-Id`, forged and hand-written messages, max_deliver into the dead-letter stream and a
 * re-drive inside the duplicate window, and the settings a worker refuses at start.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import {
  createNatsHandoff,
  createNatsWorker,
  listNatsDeadLetters,
  type NatsWorkerOptions,
  redriveNatsDeadLetters,
} from '@svc/webhooks/nats';
import { createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery } from '../../receivers/support.js';
import { post, serve, until } from '../pg-boss/support.js';
import {
  connectNats,
  createStreams,
  type NatsServer,
  natsAvailable,
  startNats,
  uniqueNames,
} from './support.js';

const START = Date.parse('2025-03-01T12:00:00.000Z');
const encoder = new TextEncoder();

describe.runIf(natsAvailable())('NATS JetStream hand-off', () => {
  let server: NatsServer;
  let nc: NatsConnection;
  const cleanup: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    server = await startNats();
    nc = await connectNats(server.url);
  });
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  });
  afterAll(async () => {
    await nc?.close();
    await server?.close();
  });

  async function setup() {
    const names = uniqueNames();
    await createStreams(nc, names);
    const js = jetstream(nc);
    const handoff = createNatsHandoff({ js, subjectPrefix: names.prefix });
    const startWorker = async (options: Omit<NatsWorkerOptions, 'js'>) => {
      const worker = await createNatsWorker({
        js,
        stream: names.stream,
        deadLetterStream: names.deadLetterStream,
        subjectPrefix: names.prefix,
        signals: [],
        backoffMs: 50,
        ...options,
      }).start();
      cleanup.push(() => worker.stop());
      return worker;
    };
    const count = async () => (await (await jetstreamManager(nc)).streams.info(names.stream)).state.messages;
    return { names, js, handoff, startWorker, count };
  }

  it('email emitter end to end: acknowledged at attempt 1 through a handler outage, each handled once', async () => {
    const { handoff, startWorker } = await setup();
    const clock = createVirtualClock({ start: START });
    let outage = true;
    let failedRuns = 0;
    const effects = new Map<string, number>();
    const emitter = createMailEmitter({
      clock,
      seed: 'nats',
      handler: (request) => receiver.handle(request),
    });
    const hook = emitter.createWebhook({ url: 'https://hooks.example.com/mail', events: ['opened'] });
    const receiver = createMailReceiver({ secret: hook.secret, handoff, logger: () => {} });
    receiver.on('opened', (event) => {
      if (outage) {
        failedRuns++;
        throw new Error('database unavailable');
      }
      effects.set(event.deliveryId, (effects.get(event.deliveryId) ?? 0) + 1);
    });
    await startWorker({ receiver, maxDeliver: 50 });
    const ids: string[] = [];
    for (let t = 0; t < 40_000; t += 2_000) {
      const [delivery] = await emitter.emit('opened');
      ids.push(delivery!.id);
      await clock.advance(2_000);
    }
    await clock.runAll();
    expect(
      ids.map((id) => [emitter.getDelivery(id).status, emitter.getDelivery(id).attempts.length]),
    ).toEqual(ids.map(() => ['succeeded', 1]));
    expect(await until(() => failedRuns >= ids.length)).toBe(true);
    outage = false;
    expect(await until(() => effects.size === ids.length)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
  });

  it('a copy of a delivery inside the duplicate window stores nothing and is answered duplicate', async () => {
    const { handoff, count, names } = await setup();
    const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff });
    receiver.on('deal.won', () => {});
    const http = await serve(receiver);
    cleanup.push(() => http.close());
    const delivery = crmDelivery('deal.won');
    const first = await post(http.url, delivery);
    expect(first.status).toBe(200);
    const copies = await Promise.all([1, 2, 3].map(() => post(http.url, delivery)));
    expect(copies.map((c) => c.status)).toEqual([200, 200, 200]);
    expect(copies.every((c) => c.body.includes('duplicate'))).toBe(true);
    expect(await count()).toBe(1);
    const jsm = await jetstreamManager(nc);
    const stored = await jsm.streams.getMessage(names.stream, { seq: 1 });
    expect(stored?.subject).toBe(`${names.prefix}.crm.deal.won`);
    expect(stored?.header.get('Nats-Msg-Id')).toBe(`crm:delivery:${delivery.deliveryId}`);
  });

  it('forged and hand-written messages never run a handler: dead-lettered at once with job_invalid', async () => {
    const { js, names, startWorker } = await setup();
    const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {} });
    let runs = 0;
    receiver.on('deal.won', () => {
      runs++;
    });
    const forged = ['not json', '{"v":2,"service":"crm"}', JSON.stringify({ v: 2, mac: '0'.repeat(64) })];
    for (const [i, body] of forged.entries())
      await js.publish(`${names.prefix}.crm.deal.won`, encoder.encode(body), { msgID: `forged-${i}` });
    await startWorker({ receiver });
    let letters: Awaited<ReturnType<typeof listNatsDeadLetters>> = [];
    expect(
      await until(async () => {
        letters = await listNatsDeadLetters({ js, deadLetterStream: names.deadLetterStream });
        return letters.length === forged.length;
      }),
    ).toBe(true);
    expect(runs).toBe(0);
    expect(letters.every((l) => l.reason.startsWith('job_invalid: ') && l.attempts === 1)).toBe(true);
  });

  it('max_deliver into the dead-letter stream; re-driven inside the duplicate window, runs once after the fix', async () => {
    const { js, names, handoff, startWorker, count } = await setup();
    const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff, logger: () => {} });
    let broken = true;
    const runs = new Map<string, number>();
    receiver.on('deal.won', (event) => {
      runs.set(event.deliveryId, (runs.get(event.deliveryId) ?? 0) + 1);
      if (broken) throw new Error('downstream refused');
    });
    const http = await serve(receiver);
    cleanup.push(() => http.close());
    const deliveries = [crmDelivery('deal.won'), crmDelivery('deal.won')];
    for (const delivery of deliveries) expect((await post(http.url, delivery)).status).toBe(200);
    await startWorker({ receiver, maxDeliver: 3 });
    const options = { js, deadLetterStream: names.deadLetterStream };
    let letters: Awaited<ReturnType<typeof listNatsDeadLetters>> = [];
    expect(
      await until(async () => {
        letters = await listNatsDeadLetters(options);
        return letters.length === 2;
      }),
    ).toBe(true);
    expect(letters.every((l) => l.reason.startsWith('handler_failed: ') && l.attempts === 3)).toBe(true);
    expect([...runs.values()]).toEqual([3, 3]);
    broken = false;
    // Well inside the 2-minute duplicate window of the original publishes: a re-drive under the
    // dedup key would be dropped (and answered as stored).
    expect(await redriveNatsDeadLetters(options)).toBe(2);
    expect(await until(() => [...runs.values()].every((n) => n === 4))).toBe(true);
    expect(await listNatsDeadLetters(options)).toEqual([]);
    expect(await count()).toBe(4);
  });

  it('refuses at start: a missing stream or dead-letter stream, an ack_wait under the handler budget', async () => {
    const { names, js } = await setup();
    const receiver = createCrmReceiver({ secret: CRM_SECRET });
    const start = (extra: Partial<NatsWorkerOptions>) =>
      createNatsWorker({
        js,
        receiver,
        stream: names.stream,
        deadLetterStream: names.deadLetterStream,
        subjectPrefix: names.prefix,
        signals: [],
        ...extra,
      }).start();
    await expect(start({ stream: 'NO_SUCH_STREAM' })).rejects.toMatchObject({ code: 'options_invalid' });
    await expect(start({ deadLetterStream: 'NO_SUCH_STREAM' })).rejects.toMatchObject({
      code: 'options_invalid',
    });
    await expect(start({ durable: 'short-ack', ackWaitMs: 5_000 })).rejects.toMatchObject({
      code: 'options_invalid',
      message: expect.stringContaining('ack_wait'),
    });
    const worker = await start({ durable: 'short-ack-ok', ackWaitMs: 5_000, timeoutMs: 4_000 });
    await worker.stop();
  });

  it('refuses at start a duplicate window under 3 minutes (the email retry span), takes 3 minutes and more', async () => {
    const receiver = createCrmReceiver({ secret: CRM_SECRET });
    const start = async (windowMs: number) => {
      const names = uniqueNames();
      await createStreams(nc, names, windowMs);
      const jsm = await jetstreamManager(nc);
      // What the server stored, not what was asked for.
      expect((await jsm.streams.info(names.stream)).config.duplicate_window).toBe(windowMs * 1_000_000);
      return {
        names,
        started: createNatsWorker({
          js: jetstream(nc),
          receiver,
          stream: names.stream,
          deadLetterStream: names.deadLetterStream,
          subjectPrefix: names.prefix,
          signals: [],
        }).start(),
      };
    };
    for (const [windowMs, found] of [
      [100, '0.1 s'],
      [120_000, '120 s'],
      [179_999, '179.999 s'],
    ] as const) {
      const { names, started } = await start(windowMs);
      const error = await started.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'options_invalid', status: 500 });
      const message = (error as Error).message;
      expect(message).toContain(`the stream ${names.stream} has a duplicate window of ${found}`);
      expect(message).toContain('at least 180 s');
      expect(message).toContain('duplicate_window');
    }
    for (const windowMs of [180_000, 300_000]) {
      const worker = await (await start(windowMs)).started;
      await worker.stop();
    }
  });
});
