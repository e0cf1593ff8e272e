import { createHmac } from 'node:crypto';
import { createMailReceiver } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import { createMailEmitter, createVirtualClock, type EmitterReport } from '../../src/testing/index.js';

const START = Date.parse('2025-03-01T12:00:00.000Z');
const hmac = (secret: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const URL_ = 'https://hooks.example.com/mail';

function setup(
  answer: (request: Request) => Promise<Response> | Response = () => new Response(null, { status: 200 }),
) {
  const clock = createVirtualClock({ start: START });
  const received: { at: number; request: Request; body: string }[] = [];
  const events: EmitterReport[] = [];
  const emitter = createMailEmitter({
    clock,
    seed: 'mail',
    onEvent: (event) => events.push(event),
    handler: async (request) => {
      received.push({ at: clock.now() - START, request, body: await request.clone().text() });
      return answer(request);
    },
  });
  return { clock, emitter, received, events };
}

describe('createMailEmitter: delivery', () => {
  it('sends the email-service §6 headers, signed over the exact bytes with node:crypto-verifiable HMAC', async () => {
    const { emitter, received } = setup();
    const hook = emitter.createWebhook({ url: URL_, events: ['bounced'], description: 'prod' });
    expect(hook.secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    const [delivery] = await emitter.emit('bounced', { to: 'ana@example.com' });
    expect(received).toHaveLength(1);
    const { request, body } = received[0]!;
    expect(request.method).toBe('POST');
    expect(request.redirect).toBe('manual');
    expect(request.headers.get('X-SvcMAIL-Event')).toBe('bounced');
    expect(request.headers.get('X-SvcMAIL-Id')).toBe(delivery!.id);
    expect(request.headers.get('X-SvcMAIL-Sig')).toBe(hmac(hook.secret, body));
    const payload = JSON.parse(body);
    expect(payload).toMatchObject({ event: 'bounced', client_id: 'client_test', to: 'ana@example.com' });
    expect(payload.timestamp).toBe('2025-03-01T12:00:00.000Z');
    expect(delivery).toMatchObject({
      status: 'succeeded',
      attempts: [{ attempt: 1, statusCode: 200, success: true }],
    });
  });

  it('a failing receiver gets attempts at exactly 0, +60 s, +120 s with one delivery id, then the delivery is failed', async () => {
    const { clock, emitter, received } = setup(() => new Response('down', { status: 503 }));
    const hook = emitter.createWebhook({ url: URL_, events: ['delivered'] });
    const [delivery] = await emitter.emit('delivered');
    expect(delivery!.nextAttemptAt).toBe('2025-03-01T12:01:00.000Z');
    await clock.runAll();
    expect(received.map((r) => r.at)).toEqual([0, 60_000, 120_000]);
    expect(new Set(received.map((r) => r.request.headers.get('X-SvcMAIL-Id')))).toEqual(
      new Set([delivery!.id]),
    );
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    const record = emitter.getDelivery(delivery!.id);
    expect(record.status).toBe('failed');
    expect(record.attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 503, 'HTTP 503'],
      [2, 503, 'HTTP 503'],
      [3, 503, 'HTTP 503'],
    ]);
    expect(emitter.listDeliveries(hook.id).map((a) => a.attempt)).toEqual([3, 2, 1]);
    expect(emitter.getWebhook(hook.id).consecutiveFailures).toBe(1);
  });

  it('the +60 s and +120 s count from the first attempt’s start, not from the delivery’s creation', async () => {
    // A clock that moves 1 s between the delivery's creation and its first attempt (the signing, on a
    // real clock): the engine hands the clock that attempt to track while it signs.
    const virtual = createVirtualClock({ start: START });
    let preparing = 0;
    const clock = {
      ...virtual,
      now: () => virtual.now() + preparing,
      track: <T>(work: Promise<T>) => {
        preparing = 1_000;
        return virtual.track(work);
      },
    };
    const emitter = createMailEmitter({ clock, handler: () => new Response('down', { status: 503 }) });
    emitter.createWebhook({ url: URL_, events: ['delivered'] });
    const [delivery] = await emitter.emit('delivered');
    await virtual.runAll();
    const record = emitter.getDelivery(delivery!.id);
    expect(Date.parse(record.createdAt)).toBe(START);
    expect(record.attempts.map((a) => Date.parse(a.attemptedAt) - START)).toEqual([1_000, 61_000, 121_000]);
  });

  it('pauses after 10 fully failed deliveries, sends nothing while paused, resumes after reactivation', async () => {
    let up = false;
    const { clock, emitter, received, events } = setup(() => new Response(null, { status: up ? 200 : 500 }));
    const hook = emitter.createWebhook({ url: URL_, events: ['delivered'] });
    for (let i = 0; i < 10; i++) await emitter.emit('delivered');
    await clock.runAll();
    expect(received).toHaveLength(30);
    expect(emitter.getWebhook(hook.id)).toMatchObject({ status: 'paused', consecutiveFailures: 10 });
    expect(events.filter((e) => e.type === 'webhook_paused')).toHaveLength(1);

    expect(await emitter.emit('delivered')).toEqual([]);
    await clock.runAll();
    expect(received).toHaveLength(30);
    expect(events.at(-1)).toMatchObject({ type: 'skipped', reason: 'webhook paused' });

    up = true;
    const updated = emitter.updateWebhook(hook.id, { status: 'active' });
    expect(updated).toMatchObject({ status: 'active', consecutiveFailures: 0, pausedAt: null });
    const [resumed] = await emitter.emit('delivered');
    expect(resumed!.status).toBe('succeeded');
    expect(received).toHaveLength(31);
  });

  it('a success resets the count of consecutive failures', async () => {
    let fail = true;
    const { clock, emitter } = setup(() => new Response(null, { status: fail ? 500 : 204 }));
    const hook = emitter.createWebhook({ url: URL_, events: ['opened'] });
    for (let i = 0; i < 9; i++) await emitter.emit('opened');
    await clock.runAll();
    expect(emitter.getWebhook(hook.id).consecutiveFailures).toBe(9);
    fail = false;
    await emitter.emit('opened');
    fail = true;
    for (let i = 0; i < 9; i++) await emitter.emit('opened');
    await clock.runAll();
    expect(emitter.getWebhook(hook.id)).toMatchObject({ status: 'active', consecutiveFailures: 9 });
  });

  it('pausing cancels the pending retries of other deliveries', async () => {
    const { clock, emitter, received } = setup(() => new Response(null, { status: 500 }));
    const hook = emitter.createWebhook({ url: URL_, events: ['opened'] });
    for (let i = 0; i < 10; i++) await emitter.emit('opened');
    await clock.advance(30_000);
    // Attempts at +30 s and +90 s; the pause comes at +120 s, so the one due at +150 s is cancelled.
    const [late] = await emitter.emit('opened');
    await clock.runAll();
    expect(emitter.getWebhook(hook.id).status).toBe('paused');
    expect(emitter.getDelivery(late!.id)).toMatchObject({ status: 'cancelled', nextAttemptAt: null });
    expect(emitter.getDelivery(late!.id).attempts.map((a) => a.attemptedAt)).toEqual([
      '2025-03-01T12:00:30.000Z',
      '2025-03-01T12:01:30.000Z',
    ]);
    expect(received).toHaveLength(32);
  });

  it('retry of a failed delivery sends the same id and bytes once; refused while paused', async () => {
    let up = false;
    const { clock, emitter, received } = setup(() => new Response(null, { status: up ? 200 : 500 }));
    const hook = emitter.createWebhook({ url: URL_, events: ['clicked'] });
    const [delivery] = await emitter.emit('clicked');
    await clock.runAll();
    up = true;
    const attempt = await emitter.retryDelivery(hook.id, delivery!.id);
    expect(attempt).toMatchObject({ attempt: 4, kind: 'retry', success: true, statusCode: 200 });
    expect(received).toHaveLength(4);
    expect(received[3]!.request.headers.get('X-SvcMAIL-Id')).toBe(delivery!.id);
    expect(received[3]!.body).toBe(received[0]!.body);
    expect(emitter.getDelivery(delivery!.id).status).toBe('succeeded');
    await clock.runAll();
    expect(received).toHaveLength(4);

    emitter.updateWebhook(hook.id, { status: 'paused' });
    await expect(emitter.retryDelivery(hook.id, delivery!.id)).rejects.toMatchObject({
      code: 'webhook_paused',
      status: 409,
    });
    await expect(emitter.retryDelivery(hook.id, 'nope')).rejects.toMatchObject({
      code: 'delivery_not_found',
      status: 404,
    });
  });

  it('send test: a synthetic signed delivered, one attempt, not counted towards pausing', async () => {
    const { emitter, received } = setup(() => new Response(null, { status: 500 }));
    const hook = emitter.createWebhook({ url: URL_, events: ['bounced'] });
    const test = await emitter.sendTest(hook.id);
    expect(test).toMatchObject({ test: true, event: 'delivered', status: 'failed' });
    expect(received[0]!.request.headers.get('X-SvcMAIL-Event')).toBe('delivered');
    expect(received[0]!.request.headers.get('X-SvcMAIL-Sig')).toBe(
      hmac(emitter.revealSecret(hook.id), received[0]!.body),
    );
    expect(emitter.getWebhook(hook.id).consecutiveFailures).toBe(0);
  });

  it('delivered twice for one message: two deliveries with different ids, collapsed by message_id+event', async () => {
    const clock = createVirtualClock({ start: START });
    const handled: string[] = [];
    let receiver: ReturnType<typeof createMailReceiver> | undefined;
    const emitter = createMailEmitter({ clock, handler: (request) => receiver!.handle(request) });
    const hook = emitter.createWebhook({ url: URL_, events: ['delivered'] });
    receiver = createMailReceiver({ secret: emitter.revealSecret(hook.id), dedupKey: 'message-event' }).on(
      'delivered',
      (event) => {
        handled.push(event.deliveryId);
      },
    );
    const [accepted] = await emitter.emit('delivered', { message_id: 'm_1' });
    const [confirmed] = await emitter.emit('delivered', { message_id: 'm_1' });
    expect(accepted!.id).not.toBe(confirmed!.id);
    expect(handled).toEqual([accepted!.id]);
    expect(confirmed!.attempts[0]).toMatchObject({ statusCode: 200, success: true });
    expect(confirmed!.attempts[0]!.responseBody).toContain('duplicate');
  });
});

describe('createMailEmitter: an event nobody subscribes to', () => {
  it('resolves to [] and reports no_subscriber; paused subscribers are skipped, not missing', async () => {
    const { emitter, received, events } = setup();
    const hook = emitter.createWebhook({ url: URL_, events: ['delivered'] });
    expect(await emitter.emit('bounced')).toEqual([]);
    expect(received).toHaveLength(0);
    expect(events).toEqual([{ type: 'no_subscriber', service: 'mail', at: START, event: 'bounced' }]);
    emitter.updateWebhook(hook.id, { status: 'paused' });
    expect(await emitter.emit('delivered')).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['no_subscriber', 'skipped']);
  });

  it('requireSubscriber: emit() rejects with webhook_not_found naming the event, and sends nothing', async () => {
    const sent: Request[] = [];
    const emitter = createMailEmitter({
      clock: createVirtualClock({ start: START }),
      requireSubscriber: true,
      handler: (request) => {
        sent.push(request);
        return new Response(null, { status: 200 });
      },
    });
    emitter.createWebhook({ url: URL_, events: ['delivered'] });
    await expect(emitter.emit('bounced')).rejects.toMatchObject({
      name: 'WebhookError',
      code: 'webhook_not_found',
      status: 404,
      message: expect.stringContaining('"bounced"'),
    });
    expect(sent).toHaveLength(0);
    expect(await emitter.emit('delivered')).toHaveLength(1);
  });
});

describe('createMailEmitter: management', () => {
  it('shows the secret once, masked on later reads; rotation replaces it at once', async () => {
    const { emitter, received } = setup();
    const hook = emitter.createWebhook({ url: URL_, events: ['opened'] });
    expect(emitter.getWebhook(hook.id).secret).toBe(`whsec_********${hook.secret.slice(-4)}`);
    expect(emitter.listWebhooks()[0]!.secret).not.toBe(hook.secret);
    const { secret } = emitter.rotateSecret(hook.id);
    expect(secret).not.toBe(hook.secret);
    await emitter.emit('opened');
    expect(received[0]!.request.headers.get('X-SvcMAIL-Sig')).toBe(hmac(secret, received[0]!.body));
  });

  it('validates registrations and updates', () => {
    const { emitter } = setup();
    expect(() => emitter.createWebhook({ url: 'http://127.0.0.1/x', events: ['opened'] })).toThrow(
      expect.objectContaining({ code: 'webhook_url_refused' }),
    );
    expect(() => emitter.createWebhook({ url: URL_, events: ['nope' as 'opened'] })).toThrow(
      expect.objectContaining({ code: 'invalid_payload' }),
    );
    expect(() => emitter.createWebhook({ url: URL_, events: [] })).toThrow(
      expect.objectContaining({ code: 'invalid_payload' }),
    );
    const hook = emitter.createWebhook({ url: URL_, events: ['opened', 'opened'], description: 'x' });
    expect(hook.events).toEqual(['opened']);
    expect(() => emitter.updateWebhook(hook.id, { status: 'on' as 'active' })).toThrow(
      expect.objectContaining({ code: 'invalid_payload' }),
    );
    expect(emitter.updateWebhook(hook.id, { events: ['clicked'], description: 'y' })).toMatchObject({
      events: ['clicked'],
      description: 'y',
    });
    expect(() => emitter.getWebhook('wh_missing')).toThrow(
      expect.objectContaining({ code: 'webhook_not_found', status: 404 }),
    );
  });

  it('refuses invalid payloads unless validate is off', async () => {
    const { emitter } = setup();
    emitter.createWebhook({ url: URL_, events: ['clicked'] });
    await expect(emitter.emit('clicked', { url: undefined })).rejects.toMatchObject({
      code: 'invalid_payload',
    });
    const loose = createMailEmitter({ validate: false, handler: () => new Response(null, { status: 200 }) });
    loose.createWebhook({ url: URL_, events: ['clicked'] });
    expect(await loose.emit('clicked', { url: undefined })).toHaveLength(1);
  });

  it('keeps attempt records 90 days on the clock', async () => {
    const { clock, emitter } = setup();
    const hook = emitter.createWebhook({ url: URL_, events: ['opened'] });
    const [delivery] = await emitter.emit('opened');
    await clock.advance(90 * 86_400_000);
    expect(emitter.listDeliveries(hook.id)).toHaveLength(1);
    await clock.advance(1);
    expect(emitter.listDeliveries(hook.id)).toEqual([]);
    expect(() => emitter.getDelivery(delivery!.id)).toThrow(
      expect.objectContaining({ code: 'delivery_not_found' }),
    );
  });

  it('jitterMs adds a bounded random delay to retries; deleting a webhook cancels its retries', async () => {
    const clock = createVirtualClock({ start: START });
    const at: number[] = [];
    const emitter = createMailEmitter({
      clock,
      seed: 1,
      jitterMs: 5_000,
      handler: () => {
        at.push(clock.now() - START);
        return new Response(null, { status: 500 });
      },
    });
    const hook = emitter.createWebhook({ url: URL_, events: ['opened'] });
    await emitter.emit('opened');
    await clock.runAll();
    expect(at[1]).toBeGreaterThanOrEqual(60_000);
    expect(at[1]).toBeLessThanOrEqual(65_000);
    expect(at[2]).toBeGreaterThanOrEqual(120_000);
    expect(at[2]).toBeLessThanOrEqual(125_000);
    const [pending] = await emitter.emit('opened');
    emitter.deleteWebhook(hook.id);
    await clock.runAll();
    expect(at).toHaveLength(4);
    expect(pending!.status).toBe('pending');
  });
});
