/**
 * The NATS JetStream hand-off against Debian's nats-server (JetStream on, a store directory of its
 * own): the reference emitter end to end through a handler outage, duplicates dropped by
 * `Nats-Msg-Id`, forged and hand-written messages, max_deliver into the dead-letter stream and a
 * re-drive inside the duplicate window, and the settings a worker refuses at start.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import {
  createNatsHandoff,
  createNatsWorker,
  listNatsDeadLetters,
  type NatsDeadLetter,
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
/** NATS's default `max_payload`, the server of these tests' (checked) and the hand-off's default. */
const MAX_PAYLOAD = 1_048_576;
/** The body of the issue: a JSON string of 520 000 quote characters, 1 040 002 bytes. */
const QUOTES = `"${'\\"'.repeat(520_000)}"`;

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
    // Nothing left for the consumer: no message waiting, none delivered and unsettled.
    const unsettled = async (durable: string) => {
      const info = await (await jetstreamManager(nc)).consumers.info(names.stream, durable);
      return info.num_pending + info.num_ack_pending;
    };
    // The dead letters once there are `length` of them (the test fails if they never come).
    const lettersWhen = async (length: number) => {
      let letters: NatsDeadLetter[] = [];
      const came = await until(async () => {
        letters = await listNatsDeadLetters({ js, deadLetterStream: names.deadLetterStream });
        return letters.length === length;
      });
      expect(came, `${letters.length} dead letters, not ${length}`).toBe(true);
      return letters;
    };
    return { names, js, handoff, startWorker, count, unsettled, lettersWhen };
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
    const { js, names, startWorker, unsettled, lettersWhen } = await setup();
    const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {} });
    let runs = 0;
    receiver.on('deal.won', () => {
      runs++;
    });
    const forged = ['not json', '{"v":2,"service":"crm"}', JSON.stringify({ v: 2, mac: '0'.repeat(64) })];
    for (const [i, body] of forged.entries())
      await js.publish(`${names.prefix}.crm.deal.won`, encoder.encode(body), { msgID: `forged-${i}` });
    await startWorker({ receiver });
    const letters = await lettersWhen(forged.length);
    expect(runs).toBe(0);
    expect(letters.every((l) => l.reason.startsWith('job_invalid: ') && l.attempts === 1)).toBe(true);
    // Terminated at the first delivery, well before ack_wait (30 s) would hand them out again.
    expect(await until(async () => (await unsettled('webhooks-crm')) === 0)).toBe(true);
  });

  it('max_deliver into the dead-letter stream; re-driven inside the duplicate window, runs once after the fix', async () => {
    const { js, names, handoff, startWorker, count, lettersWhen } = await setup();
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
    const letters = await lettersWhen(2);
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

  it('the largest body a receiver takes is dead-lettered whole after max_deliver and re-driven; a larger one is 413 at receipt', async () => {
    const { js, names, handoff, startWorker, count, unsettled, lettersWhen } = await setup();
    expect(nc.info?.max_payload).toBe(MAX_PAYLOAD);
    expect(handoff.maxBodyBytes).toBe(774_144); // (1 MiB - 16 KiB) x 3/4
    const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff, logger: () => {} });
    let broken = true;
    const runs: number[] = [];
    receiver.on('deal.won', (event) => {
      runs.push(event.data.title.length);
      if (broken) throw new Error('downstream refused');
    });
    const http = await serve(receiver);
    cleanup.push(() => http.close());
    const sized = (bytes: number) => {
      const base = crmDelivery('deal.won', { data: { deal_id: 'd_1', title: '', value: 1 } }).body.length;
      return crmDelivery('deal.won', { data: { deal_id: 'd_1', title: 'x'.repeat(bytes - base), value: 1 } });
    };
    const largest = sized(handoff.maxBodyBytes);
    expect(largest.body.length).toBe(handoff.maxBodyBytes);
    expect((await post(http.url, largest)).status).toBe(200);
    const over = await post(http.url, sized(handoff.maxBodyBytes + 1));
    expect([over.status, JSON.parse(over.body).error?.code]).toEqual([413, 'body_too_large']);
    // The body: valid JSON, signed with the secret (node:crypto), under max_payload, and
    // refused before anything is acknowledged or stored.
    expect(QUOTES.length).toBe(1_040_002);
    expect(JSON.parse(QUOTES)).toBe('"'.repeat(520_000));
    const quotes = crmDelivery('deal.won', { rawBody: QUOTES });
    const expected = createHmac('sha256', CRM_SECRET).update(QUOTES).digest('hex');
    expect(
      timingSafeEqual(Buffer.from(quotes.headers['x-svc-signature']!), Buffer.from(`sha256=${expected}`)),
    ).toBe(true);
    const refused = await post(http.url, quotes);
    expect([refused.status, JSON.parse(refused.body).error?.code]).toEqual([413, 'body_too_large']);
    expect(await count()).toBe(1);

    await startWorker({ receiver, maxDeliver: 2, durable: 'largest' });
    const options = { js, deadLetterStream: names.deadLetterStream };
    const letters = await lettersWhen(1);
    expect(letters[0]).toMatchObject({ deliveryId: largest.deliveryId, attempts: 2 });
    expect(letters[0]?.reason).toMatch(/^handler_failed: /);
    expect(letters[0]?.kept).toBeUndefined();
    // `term` is not confirmed by the server: wait for it.
    expect(await until(async () => (await unsettled('largest')) === 0)).toBe(true);
    // The letter holds the job's bytes unchanged, after one line of what happened.
    const jsm = await jetstreamManager(nc);
    const job = (await jsm.streams.getMessage(names.stream, { seq: 1 }))!.data;
    const letter = (await jsm.streams.getMessage(names.deadLetterStream, { seq: 1 }))!.data;
    const line = letter.indexOf(10);
    expect(JSON.parse(new TextDecoder().decode(letter.subarray(0, line)))).toMatchObject({
      attempts: 2,
      stream: names.stream,
      seq: 1,
    });
    expect(Buffer.from(letter.subarray(line + 1)).equals(Buffer.from(job))).toBe(true);
    broken = false;
    expect(await redriveNatsDeadLetters(options)).toBe(1);
    expect(await until(() => runs.length === 3)).toBe(true);
    expect(runs[2]).toBe(runs[0]);
    expect(await listNatsDeadLetters(options)).toEqual([]);
    expect(await until(async () => (await unsettled('largest')) === 0)).toBe(true);
  });

  it('a hand-written message up to max_payload is dead-lettered: whole when the letter fits, else kept in the work stream and named', async () => {
    const { js, names, startWorker, unsettled, lettersWhen } = await setup();
    const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {} });
    let runs = 0;
    receiver.on('deal.won', () => {
      runs++;
    });
    const subject = `${names.prefix}.crm.deal.won`;
    // The body written straight to the work stream: its JSON-escaped envelope was twice max_payload.
    await js.publish(subject, encoder.encode(QUOTES), { msgID: 'quotes' });
    // The largest message the server takes: the data fills max_payload with the Nats-Msg-Id header.
    const header = encoder.encode('NATS/1.0\r\nNats-Msg-Id: full\r\n\r\n').length;
    const full = new Uint8Array(MAX_PAYLOAD - header).fill(0x7b);
    await js.publish(subject, full, { msgID: 'full' });
    // ack_wait (30 s) outlasts the waits below: a letter or a settlement must come from the first delivery.
    await startWorker({ receiver, durable: 'hand-written' });
    const letters = await lettersWhen(2);
    expect(runs).toBe(0);
    expect(letters.map((l) => [l.reason.split(':')[0], l.attempts, l.kept])).toEqual([
      ['job_invalid', 1, undefined],
      ['job_invalid', 1, { stream: names.stream, seq: 2 }],
    ]);
    // `term` is not confirmed by the server: wait for it.
    expect(await until(async () => (await unsettled('hand-written')) === 0)).toBe(true);
    const jsm = await jetstreamManager(nc);
    const quotes = (await jsm.streams.getMessage(names.deadLetterStream, { seq: 1 }))!.data;
    expect(new TextDecoder().decode(quotes.subarray(quotes.indexOf(10) + 1))).toBe(QUOTES);
    const kept = (await jsm.streams.getMessage(names.stream, { seq: 2 }))!.data;
    expect(Buffer.from(kept).equals(Buffer.from(full))).toBe(true);
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
