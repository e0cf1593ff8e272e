import { createHmac } from 'node:crypto';
import { createCrmReceiver } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import { createCrmEmitter, createSignedRequest, createVirtualClock } from '../../src/testing/index.js';

const START = Date.parse('2025-03-01T12:00:00.000Z');
const hmac = (secret: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const URL_ = 'https://hooks.example.com/crm';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function setup(
  answer: (request: Request) => Promise<Response> | Response = () => new Response(null, { status: 200 }),
) {
  const clock = createVirtualClock({ start: START });
  const received: { at: number; request: Request; body: string }[] = [];
  const emitter = createCrmEmitter({
    clock,
    seed: 'crm',
    tenantId: 'tenant_1',
    handler: async (request) => {
      received.push({ at: clock.now() - START, request, body: await request.clone().text() });
      return answer(request);
    },
  });
  return { clock, emitter, received };
}

describe('createCrmEmitter: an event nobody subscribes to', () => {
  it('resolves to [] with an onEvent report, or rejects under requireSubscriber', async () => {
    const reported: string[] = [];
    const lenient = createCrmEmitter({
      clock: createVirtualClock({ start: START }),
      onEvent: (event) => void reported.push(event.type),
      handler: () => new Response(null, { status: 200 }),
    });
    expect(await lenient.emit('deal.won')).toEqual([]);
    expect(reported).toEqual(['no_subscriber']);
    const strict = createCrmEmitter({
      clock: createVirtualClock({ start: START }),
      requireSubscriber: true,
      handler: () => new Response(null, { status: 200 }),
    });
    const hook = strict.createWebhook({ name: 'n', url: URL_, events: ['deal.lost'] });
    await expect(strict.emit('deal.won')).rejects.toMatchObject({ code: 'webhook_not_found' });
    // An inactive subscriber is not a missing one: the event is skipped, not refused.
    strict.updateWebhook(hook.id, { active: false });
    expect(await strict.emit('deal.lost')).toEqual([]);
  });
});

describe('createCrmEmitter: delivery', () => {
  it('sends the crm-service §6 headers and an envelope whose id is X-Svc-Delivery', async () => {
    const { emitter, received } = setup();
    const hook = emitter.createWebhook({ name: 'sales', url: URL_, events: ['deal.won'] });
    const [delivery] = await emitter.emit('deal.won', { value: 5000 });
    const { request, body } = received[0]!;
    const envelope = JSON.parse(body);
    expect(Object.keys(envelope)).toEqual(['id', 'event', 'timestamp', 'tenant_id', 'data']);
    expect(envelope).toMatchObject({
      id: delivery!.id,
      event: 'deal.won',
      tenant_id: 'tenant_1',
      data: { value: 5000 },
    });
    expect(envelope.id).toMatch(UUID);
    expect(envelope.timestamp).toBe('2025-03-01T12:00:00.000Z');
    expect(request.headers.get('Content-Type')).toBe('application/json');
    expect(request.headers.get('X-Svc-Delivery')).toBe(envelope.id);
    expect(request.headers.get('X-Svc-Event')).toBe('deal.won');
    expect(request.headers.get('X-Svc-Signature')).toBe(hmac(hook.secret, body));
    expect(request.headers.get('User-Agent')).toBe('Svc-CRM-Webhook/1.0');
  });

  it('retries at most 3 times, 1 s then 2 s apart, same id and bytes; never pauses', async () => {
    const { clock, emitter, received } = setup(() => new Response(null, { status: 500 }));
    const hook = emitter.createWebhook({ name: 'n', url: URL_, events: ['contact.created'] });
    const [delivery] = await emitter.emit('contact.created');
    await clock.runAll();
    expect(received.map((r) => r.at)).toEqual([0, 1_000, 3_000]);
    expect(new Set(received.map((r) => r.request.headers.get('X-Svc-Delivery')))).toEqual(
      new Set([delivery!.id]),
    );
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    expect(emitter.listDeliveries(hook.id)[0]).toMatchObject({
      id: delivery!.id,
      statusCode: 500,
      attempts: 3,
      success: false,
    });
    for (let i = 0; i < 15; i++) await emitter.emit('contact.created');
    await clock.runAll();
    expect(emitter.getWebhook(hook.id).active).toBe(true);
    expect(received).toHaveLength(48);
  });

  it('a 302 is a failed attempt (redirects are not followed)', async () => {
    const { clock, emitter } = setup(
      () => new Response(null, { status: 302, headers: { Location: 'https://elsewhere.example.com/' } }),
    );
    const hook = emitter.createWebhook({ name: 'n', url: URL_, events: ['deal.lost'] });
    await emitter.emit('deal.lost');
    await clock.runAll();
    const [summary] = emitter.listDeliveries(hook.id);
    expect(summary).toMatchObject({ statusCode: 302, attempts: 3, success: false });
    expect(summary!.attemptLog[0]!.error).toBe('redirect 302 not followed');
  });

  it('a handler that takes 11 s times out at 10 s of virtual time: status 0', async () => {
    const clock = createVirtualClock({ start: START });
    const emitter = createCrmEmitter({
      clock,
      handler: async () => {
        await clock.sleep(11_000);
        return new Response(null, { status: 200 });
      },
    });
    const hook = emitter.createWebhook({ name: 'slow', url: URL_, events: ['deal.won'] });
    const pending = emitter.emit('deal.won');
    await clock.runAll();
    await pending;
    const [summary] = emitter.listDeliveries(hook.id);
    expect(summary).toMatchObject({ statusCode: 0, attempts: 3, success: false });
    expect(summary!.attemptLog.map((a) => [a.attemptedAt.slice(11), a.durationMs, a.error])).toEqual([
      ['12:00:00.000Z', 10_000, 'timeout: no response within 10000 ms'],
      ['12:00:11.000Z', 10_000, 'timeout: no response within 10000 ms'],
      ['12:00:23.000Z', 10_000, 'timeout: no response within 10000 ms'],
    ]);
  });

  it('a handler that throws (no response) is status 0 with the error text', async () => {
    const { clock, emitter } = setup(() => {
      throw new TypeError('socket hang up');
    });
    const hook = emitter.createWebhook({ name: 'n', url: URL_, events: ['deal.won'] });
    await emitter.emit('deal.won');
    await clock.runAll();
    expect(emitter.listDeliveries(hook.id)[0]!.attemptLog[0]).toMatchObject({
      statusCode: 0,
      error: 'socket hang up',
    });
  });

  it('an inactive webhook receives nothing; deactivating cancels pending retries', async () => {
    const { clock, emitter, received } = setup(() => new Response(null, { status: 500 }));
    const hook = emitter.createWebhook({ name: 'n', url: URL_, events: ['deal.won'] });
    const [delivery] = await emitter.emit('deal.won');
    emitter.updateWebhook(hook.id, { active: false });
    await clock.runAll();
    expect(received).toHaveLength(1);
    expect(emitter.getDelivery(delivery!.id).status).toBe('cancelled');
    expect(await emitter.emit('deal.won')).toEqual([]);
    emitter.updateWebhook(hook.id, { active: true });
    expect(await emitter.emit('deal.won')).toHaveLength(1);
  });

  it('rotation: the old secret stops at once; a receiver with both secrets keeps working', async () => {
    const clock = createVirtualClock({ start: START });
    let target: ReturnType<typeof createCrmReceiver> | undefined;
    const emitter = createCrmEmitter({ clock, handler: (request) => target!.handle(request) });
    const hook = emitter.createWebhook({ name: 'n', url: URL_, events: ['deal.won'] });
    const oldSecret = hook.secret;
    const { secret: newSecret } = emitter.rotateSecret(hook.id);

    const onlyNew = createCrmReceiver({ secret: newSecret });
    const both = createCrmReceiver({ secret: [newSecret, oldSecret] });
    const signedWithOld = () => createSignedRequest({ service: 'crm', event: 'deal.won', secret: oldSecret });
    expect((await onlyNew.handle(await signedWithOld())).status).toBe(401);
    expect((await both.handle(await signedWithOld())).status).toBe(200);

    target = onlyNew;
    expect((await emitter.emit('deal.won'))[0]!.status).toBe('succeeded');
    target = both;
    expect((await emitter.emit('deal.won'))[0]!.status).toBe('succeeded');
    target = createCrmReceiver({ secret: oldSecret });
    expect((await emitter.emit('deal.won'))[0]!.attempts[0]!.statusCode).toBe(401);
  });
});

describe('createCrmEmitter: management', () => {
  it('create returns the secret, later reads mask it; accepted event names; delete', async () => {
    const { emitter, clock, received } = setup(() => new Response(null, { status: 500 }));
    const hook = emitter.createWebhook({ name: 'a', url: URL_, events: ['deal.won', 'deal.lost'] });
    expect(hook).toMatchObject({ name: 'a', active: true });
    expect(hook.id).toMatch(UUID);
    expect(emitter.listWebhooks()[0]!.secret).toBe(`whsec_********${hook.secret.slice(-4)}`);
    expect(emitter.listEventNames()).toHaveLength(13);
    expect(emitter.updateWebhook(hook.id, { name: 'b', events: ['deal.won'] })).toMatchObject({
      name: 'b',
      events: ['deal.won'],
    });
    await emitter.emit('deal.won');
    expect(emitter.deleteWebhook(hook.id)).toEqual({ id: hook.id, deleted: true });
    await clock.runAll();
    expect(received).toHaveLength(1);
    expect(() => emitter.listDeliveries(hook.id)).toThrow(
      expect.objectContaining({ code: 'webhook_not_found' }),
    );
    expect(() => emitter.createWebhook({ name: 'x', url: 'http://[::1]/', events: ['deal.won'] })).toThrow(
      expect.objectContaining({ code: 'webhook_url_refused' }),
    );
    expect(() => emitter.createWebhook({ url: URL_, events: ['deal.won'] } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_payload' }),
    );
  });

  it('lists the 50 most recent deliveries, newest first', async () => {
    const { emitter } = setup();
    const hook = emitter.createWebhook({ name: 'a', url: URL_, events: ['contact.updated'] });
    const ids: string[] = [];
    for (let i = 0; i < 55; i++) ids.push((await emitter.emit('contact.updated'))[0]!.id);
    const list = emitter.listDeliveries(hook.id);
    expect(list).toHaveLength(50);
    expect(list.map((d) => d.id)).toEqual(ids.slice(5).reverse());
    expect(list[0]).toMatchObject({ statusCode: 200, attempts: 1, success: true });
  });
});
