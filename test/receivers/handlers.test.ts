/**
 * Handler registration and dispatch, the handler context, hooks, logging, options and dedup keys.
 */
import {
  createCrmReceiver,
  createMailReceiver,
  createMemoryStore,
  type HandlerContext,
  type InvalidDelivery,
  isWebhookError,
  type LogEntry,
  type WebhookError,
} from '@svc/webhooks';
import { createMailEmitter } from '@svc/webhooks/testing';
import { MIN_SECRET_LENGTH } from '@svc/webhooks/verify';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../support/clock.js';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery, sign } from './support.js';

describe('registration and dispatch', () => {
  it('runs specific handlers in order, then onAny; chaining returns the receiver', async () => {
    const order: string[] = [];
    const receiver = createCrmReceiver({ secret: CRM_SECRET });
    const chained = receiver
      .onAny((event) => void order.push(`any:${event.name}`))
      .on(['deal.won', 'deal.lost'], (event) => void order.push(`closed:${event.name}`))
      .on('deal.won', () => void order.push('won'));
    expect(chained).toBe(receiver);
    await deliver(receiver, crmDelivery('deal.won'));
    await deliver(receiver, crmDelivery('deal.lost'));
    await deliver(receiver, crmDelivery('deal.stage_changed'));
    expect(order).toEqual([
      'closed:deal.won',
      'won',
      'any:deal.won',
      'closed:deal.lost',
      'any:deal.lost',
      'any:deal.stage_changed',
    ]);
  });

  it('stops at the first handler that throws', async () => {
    const ran: string[] = [];
    const receiver = createMailReceiver({ secret: MAIL_SECRET })
      .on('bounced', () => {
        ran.push('first');
        throw new Error('x');
      })
      .on('bounced', () => void ran.push('second'));
    expect((await deliver(receiver, mailDelivery('bounced'))).status).toBe(500);
    expect(ran).toEqual(['first']);
  });

  it('onAny sees known events only; onUnknown only unknown ones', async () => {
    const any: string[] = [];
    const unknown: string[] = [];
    const receiver = createMailReceiver({ secret: MAIL_SECRET })
      .onAny((event) => void any.push(event.name))
      .onUnknown((event) => void unknown.push(event.name));
    await deliver(receiver, mailDelivery('opened'));
    await deliver(receiver, mailDelivery('sms_sent'));
    expect(any).toEqual(['opened']);
    expect(unknown).toEqual(['sms_sent']);
  });

  it('refuses unknown names and non-functions at registration', () => {
    const receiver = createMailReceiver({ secret: MAIL_SECRET });
    // docs/errors.md: everything the library throws is a WebhookError with a documented code.
    const thrown = (register: () => unknown): WebhookError => {
      try {
        register();
      } catch (error) {
        expect(isWebhookError(error)).toBe(true);
        return error as WebhookError;
      }
      throw new Error('expected a throw');
    };
    const typo = thrown(() => receiver.on('bounce' as 'bounced', () => {}));
    expect([typo.code, typo.status]).toEqual(['options_invalid', 500]);
    expect(typo.message).toMatch(/"bounce" is not an event name/);
    expect(typo.message).toContain('did you mean "bounced"?');
    expect(thrown(() => receiver.on('unsubscibed' as 'bounced', () => {})).message).toContain(
      '"unsubscribed"',
    );
    // Nothing close: every name is listed, so the fix is in the message.
    const far = thrown(() => receiver.on('zzzzzzzz' as 'bounced', () => {}));
    expect(far.message).toContain('"delivered", "deferred", "bounced"');
    expect(thrown(() => receiver.on([42] as never, () => {})).message).toMatch(
      /a number is not an event name/,
    );
    expect(thrown(() => receiver.on([] as 'bounced'[], () => {})).code).toBe('options_invalid');
    expect(thrown(() => receiver.on('bounced', 'x' as never)).message).toMatch(/must be a function/);
    expect(thrown(() => receiver.onError(undefined as never)).code).toBe('options_invalid');
    const crm = createCrmReceiver({ secret: CRM_SECRET });
    expect(thrown(() => crm.on('deal.wonn' as 'deal.won', () => {})).message).toContain(
      'did you mean "deal.won"?',
    );
  });

  it('verifies with any secret of a rotation and reports which matched', async () => {
    const receiver = createMailReceiver({ secret: ['whsec_new_rotated_secret', MAIL_SECRET] });
    const indexes: number[] = [];
    receiver.on('delivered', (event) => void indexes.push(event.secretIndex));
    await deliver(receiver, mailDelivery('delivered', { secret: MAIL_SECRET }));
    await deliver(receiver, mailDelivery('delivered', { secret: 'whsec_new_rotated_secret' }));
    expect(indexes).toEqual([1, 0]);
  });

  it('reads renamed headers', async () => {
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      headerNames: { signature: 'X-Acme-Signature', deliveryId: 'X-Acme-Delivery', event: 'X-Acme-Event' },
    });
    let runs = 0;
    receiver.on('deal.won', () => void runs++);
    const delivery = crmDelivery('deal.won');
    const headers = {
      'x-acme-signature': delivery.headers['x-svc-signature']!,
      'x-acme-delivery': delivery.deliveryId,
      'x-acme-event': 'deal.won',
    };
    expect((await deliver(receiver, { ...delivery, headers })).status).toBe(200);
    expect((await deliver(receiver, delivery)).code).toBe('signature_missing');
    expect(runs).toBe(1);
  });
});

describe('handler context', () => {
  it('carries deliveryId, dedupKey, deadline, timeLeftMs, a live signal and a bound log', async () => {
    const clock = createManualClock(1_000_000);
    const entries: LogEntry[] = [];
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      clock,
      timeoutMs: 5_000,
      logger: (e) => void entries.push(e),
    });
    let seen: { context: HandlerContext; left: number[]; aborted: boolean } | undefined;
    receiver.on('clicked', (_event, context) => {
      const left = [context.timeLeftMs()];
      clock.advance(1_500);
      left.push(context.timeLeftMs());
      clock.advance(10_000);
      left.push(context.timeLeftMs());
      context.log.info('handled', { extra: 1 });
      seen = { context, left, aborted: context.signal.aborted };
    });
    const delivery = mailDelivery('clicked', {
      payload: {
        client_id: 'c',
        message_id: 'm',
        to: 'a@b.c',
        timestamp: '2024-05-01T10:05:00.000Z',
        url: 'https://x',
      },
    });
    expect((await deliver(receiver, delivery)).status).toBe(200);
    expect(seen?.context.deliveryId).toBe(delivery.deliveryId);
    expect(seen?.context.dedupKey).toBe(`mail:delivery:${delivery.deliveryId}`);
    expect(seen?.context.deadline).toBe(1_000_000 + 5_000);
    expect(seen?.left).toEqual([5_000, 3_500, 0]);
    expect(seen?.aborted).toBe(false);
    expect(entries).toContainEqual({
      level: 'info',
      message: 'handled',
      fields: {
        service: 'mail',
        deliveryId: delivery.deliveryId,
        event: 'clicked',
        dedupKey: `mail:delivery:${delivery.deliveryId}`,
        extra: 1,
      },
    });
  });

  it("aborts the handler's signal when the request's own signal aborts (sender disconnected)", async () => {
    const receiver = createMailReceiver({ secret: MAIL_SECRET });
    const upstream = new AbortController();
    let reason: unknown;
    receiver.on('delivered', async (_event, { signal }) => {
      upstream.abort(new Error('client went away'));
      reason = signal.aborted ? signal.reason : undefined;
    });
    const delivery = mailDelivery('delivered');
    await receiver.receive({ body: delivery.body, headers: delivery.headers, signal: upstream.signal });
    expect(String(reason)).toContain('client went away');
  });
});

describe('invalid payloads are never dropped silently', () => {
  it('onInvalid gets the raw bytes and the error, awaited before the 400', async () => {
    const stored: InvalidDelivery[] = [];
    const receiver = createMailReceiver({ secret: MAIL_SECRET }).onInvalid(async (invalid) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      stored.push(invalid);
    });
    const delivery = mailDelivery('bounced', { payload: { event: 'bounced', client_id: 'c' } });
    const outcome = await deliver(receiver, delivery);
    expect(outcome).toMatchObject({
      status: 400,
      code: 'invalid_payload',
      deliveryId: delivery.deliveryId,
      event: 'bounced',
    });
    expect(stored).toHaveLength(1);
    expect(stored[0]?.body).toEqual(delivery.body);
    expect(stored[0]?.error.code).toBe('invalid_payload');
    expect(stored[0]).toMatchObject({ deliveryId: delivery.deliveryId, event: 'bounced', secretIndex: 0 });
  });

  it('without onInvalid, onError gets phase invalid with the body; a throwing onInvalid reaches onError', async () => {
    const reports: Array<{ phase: string; body?: Uint8Array; code?: string }> = [];
    const receiver = createCrmReceiver({ secret: CRM_SECRET }).onError((error, info) =>
      reports.push({
        phase: info.phase,
        body: info.body,
        code: isWebhookError(error) ? error.code : undefined,
      }),
    );
    const bad = crmDelivery('deal.won', { rawBody: '{"event":"deal.won","id":1}' });
    expect((await deliver(receiver, bad)).status).toBe(400);
    expect(reports).toEqual([{ phase: 'invalid', body: bad.body, code: 'delivery_id_missing' }]);
    receiver.onInvalid(() => {
      throw new Error('disk full');
    });
    expect((await deliver(receiver, bad)).status).toBe(400);
    expect(reports[1]?.phase).toBe('invalid_hook');
  });

  it('an unverified body never reaches onInvalid', async () => {
    let calls = 0;
    const receiver = createMailReceiver({ secret: MAIL_SECRET }).onInvalid(() => void calls++);
    const delivery = mailDelivery('delivered', { rawBody: 'not json', secret: 'other' });
    expect((await deliver(receiver, delivery)).status).toBe(401);
    expect(calls).toBe(0);
  });
});

describe('logging and error hooks', () => {
  it('logs structured entries without secrets or signatures; a throwing logger or onError changes nothing', async () => {
    const entries: LogEntry[] = [];
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      logger: (entry) => {
        entries.push(entry);
        throw new Error('logger broke');
      },
    })
      .onError(() => {
        throw new Error('hook broke');
      })
      .on('delivered', () => {
        throw new Error('handler broke');
      });
    const delivery = mailDelivery('delivered');
    expect((await deliver(receiver, delivery)).status).toBe(500);
    const forged = {
      ...delivery,
      headers: { ...delivery.headers, 'x-svcmail-sig': sign(delivery.body, 'x') },
    };
    expect((await deliver(receiver, forged)).status).toBe(401);
    const text = JSON.stringify(entries);
    expect(text).not.toContain(MAIL_SECRET);
    expect(text).not.toContain(delivery.headers['x-svcmail-sig']!.slice(7));
    expect(entries.find((e) => e.message === 'webhook handler threw')).toMatchObject({
      level: 'error',
      fields: {
        service: 'mail',
        deliveryId: delivery.deliveryId,
        phase: 'handler',
        err: expect.objectContaining({ message: 'handler broke' }),
      },
    });
    expect(entries.find((e) => e.message === 'webhook signature rejected')?.fields.code).toBe(
      'signature_mismatch',
    );
  });
});

describe('options', () => {
  it('throws secret_invalid at creation, without the secret in the message', () => {
    for (const secret of ['', ' whsec_padded\n', [], ['ok', ''], 42]) {
      let caught: unknown;
      try {
        createMailReceiver({ secret: secret as string });
      } catch (error) {
        caught = error;
      }
      expect(isWebhookError(caught) && caught.code).toBe('secret_invalid');
      expect(String((caught as Error).message)).not.toContain('whsec_padded');
    }
    expect(() => createCrmReceiver({} as never)).toThrow(/secret/);
  });

  it('refuses secrets shorter than MIN_SECRET_LENGTH (16) at creation; emitter secrets pass', () => {
    for (const secret of ['x', 'changeme', 'whsec_short_15c', [MAIL_SECRET, 'whsec_old']]) {
      let caught: unknown;
      try {
        createMailReceiver({ secret });
      } catch (error) {
        caught = error;
      }
      expect(isWebhookError(caught) && caught.code).toBe('secret_invalid');
      expect((caught as Error).message).toMatch(/shorter than 16 characters/);
      expect((caught as Error).message).not.toContain('changeme');
    }
    expect(MIN_SECRET_LENGTH).toBe(16);
    createCrmReceiver({ secret: '0123456789abcdef' });
    const webhook = createMailEmitter().createWebhook({
      url: 'https://example.com/hook',
      events: ['bounced'],
    });
    createMailReceiver({ secret: webhook.secret });
  });

  it('throws options_invalid for bad numbers, a lease not longer than the deadline, or an unknown strategy', () => {
    const bad = [
      { maxBodyBytes: 0 },
      { leaseMs: -1 },
      { ttlMs: 1.5 },
      { timeoutMs: 10_000, leaseMs: 10_000 },
      { storeTimeoutMs: Number.NaN },
      { bodyTimeoutMs: 0 },
      { dedupKey: 'message-id' },
      { dedup: {} },
      { logger: 'console' },
    ];
    for (const options of bad) {
      let caught: unknown;
      try {
        createMailReceiver({ secret: MAIL_SECRET, ...(options as object) });
      } catch (error) {
        caught = error;
      }
      expect(isWebhookError(caught) && caught.code, JSON.stringify(options)).toBe('options_invalid');
    }
  });

  it('keys are namespaced per service, so one store serves both receivers', async () => {
    const dedup = createMemoryStore();
    const id = '9b2e4c1a-7d3f-4e5a-8b6c-1d2e3f4a5b6c';
    const keys: string[] = [];
    const mail = createMailReceiver({ secret: MAIL_SECRET, dedup }).on(
      'delivered',
      (_e, c) => void keys.push(c.dedupKey),
    );
    const crm = createCrmReceiver({ secret: CRM_SECRET, dedup }).on(
      'deal.won',
      (_e, c) => void keys.push(c.dedupKey),
    );
    expect((await deliver(mail, mailDelivery('delivered', { deliveryId: id }))).kind).toBe('handled');
    expect((await deliver(crm, crmDelivery('deal.won', { deliveryId: id }))).kind).toBe('handled');
    expect(keys).toEqual([`mail:delivery:${id}`, `crm:delivery:${id}`]);
  });

  it("'message-event' falls back to the delivery id for events without message_id; an unknown event with one is keyed by it", async () => {
    const keys: string[] = [];
    const receiver = createMailReceiver({ secret: MAIL_SECRET, dedupKey: 'message-event' })
      .on(['ip_paused', 'bounced'], (_e, c) => void keys.push(c.dedupKey))
      .onUnknown((_e, c) => void keys.push(c.dedupKey));
    const paused = mailDelivery('ip_paused', { payload: { client_id: 'c', ip: '203.0.113.7' } });
    await deliver(receiver, paused);
    await deliver(receiver, mailDelivery('bounced', { messageId: 'm_9' }));
    const unknown = mailDelivery('sms_sent', { messageId: 'm_9' });
    await deliver(receiver, unknown);
    expect(keys).toEqual([
      `mail:delivery:${paused.deliveryId}`,
      'mail:message:bounced:m_9',
      'mail:message:sms_sent:m_9',
    ]);
  });

  it('a dedupKey function is namespaced; when it throws the request fails 500 and onError hears of it', async () => {
    const keys: string[] = [];
    const phases: string[] = [];
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      dedupKey: (event) =>
        event.name === 'deal.lost'
          ? (undefined as unknown as string)
          : `tenant:${event.tenantId}:${event.deliveryId}`,
    })
      .on(['deal.won', 'deal.lost'], (_e, c) => void keys.push(c.dedupKey))
      .onError((_error, info) => void phases.push(info.phase));
    const won = crmDelivery('deal.won');
    expect((await deliver(receiver, won)).status).toBe(200);
    expect(keys).toEqual([`crm:tenant:tenant_1:${won.deliveryId}`]);
    expect(await deliver(receiver, crmDelivery('deal.lost'))).toMatchObject({
      status: 500,
      code: 'internal_error',
    });
    expect(phases).toEqual(['dedup_key']);
  });
});
