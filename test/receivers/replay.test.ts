/**
 * Replay and relabelling defences (docs/security.md). Both services sign the body only: the email
 * service's `X-SvcMAIL-Id` and `X-SvcMAIL-Event` are not covered by the signature, so a captured body
 * can be re-sent with a fresh id or, when it has no `event` field, under another event name.
 */
import {
  constructCrmEvent,
  constructMailEvent,
  createCrmReceiver,
  createMailReceiver,
  isWebhookError,
} from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import { EVENT_CLOCK_SKEW_MS } from '../../src/core/event-age.js';
import { createManualClock } from '../support/clock.js';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from './support.js';

// The timestamps of the support module's deliveries.
const MAIL_AT = Date.parse('2024-05-01T10:00:00.123Z');
const CRM_AT = Date.parse('2024-05-01T10:00:00.000Z');
const MINUTE = 60_000;

/** A captured `delivered` body without an `event` field (the spec shows it in one example only). */
function capturedDelivered() {
  return {
    client_id: 'client_1',
    message_id: 'msg_captured',
    to: 'ana@example.com',
    provider: 'gmail',
  };
}

/** The captured body re-sent by an attacker: same signed bytes, any headers. */
function relabelled(as: string, deliveryId?: string) {
  const original = mailDelivery('delivered', { payload: capturedDelivered() });
  return {
    ...original,
    headers: { ...original.headers, 'x-svcmail-event': as, 'x-svcmail-id': deliveryId ?? `dlv_${as}` },
  };
}

async function rejection(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWebhookError(error)) throw new Error(`expected a WebhookError, got ${String(error)}`);
  return [error.code, error.status];
}

describe('relabelling (email: the event header is not signed)', () => {
  it('by default a body without "event" is taken under the header name (the threat; defaults unchanged)', async () => {
    const handled: string[] = [];
    const receiver = createMailReceiver({ secret: MAIL_SECRET }).on(['delivered', 'bounced'], (event) => {
      handled.push(event.name);
    });
    expect(await deliver(receiver, relabelled('bounced'))).toMatchObject({
      status: 200,
      kind: 'handled',
    });
    expect(handled).toEqual(['bounced']);
  });

  it('requireBodyEvent: a captured delivered re-sent as bounced or complained is refused (400 event_missing)', async () => {
    const handled: string[] = [];
    const receiver = createMailReceiver({ secret: MAIL_SECRET, requireBodyEvent: true }).onAny((event) => {
      handled.push(event.name);
    });
    for (const as of ['bounced', 'complained', 'delivered']) {
      expect(await deliver(receiver, relabelled(as))).toMatchObject({ status: 400, code: 'event_missing' });
    }
    expect(handled).toEqual([]);
    // A body that names its event is accepted, and can no longer be relabelled.
    const genuine = mailDelivery('bounced');
    expect(await deliver(receiver, genuine)).toMatchObject({ status: 200, kind: 'handled' });
    const swapped = { ...genuine, headers: { ...genuine.headers, 'x-svcmail-event': 'delivered' } };
    expect(await deliver(receiver, swapped)).toMatchObject({ status: 400, code: 'event_mismatch' });
    expect(handled).toEqual(['bounced']);
  });

  it('requireBodyEvent on constructMailEvent', async () => {
    const { body, headers } = relabelled('bounced');
    await expect(constructMailEvent(body, headers, MAIL_SECRET)).resolves.toMatchObject({ name: 'bounced' });
    expect(
      await rejection(constructMailEvent(body, headers, MAIL_SECRET, { requireBodyEvent: true })),
    ).toEqual(['event_missing', 400]);
    const genuine = mailDelivery('bounced');
    await expect(
      constructMailEvent(genuine.body, genuine.headers, MAIL_SECRET, { requireBodyEvent: true }),
    ).resolves.toMatchObject({ name: 'bounced', known: true });
  });

  it('requireBodyEvent must be a boolean', () => {
    expect(() => createMailReceiver({ secret: MAIL_SECRET, requireBodyEvent: 'yes' as never })).toThrow(
      expect.objectContaining({ code: 'options_invalid' }),
    );
  });
});

describe('replay with fresh delivery ids (email)', () => {
  it("'delivery-id' dedup runs the handler for every fresh id (the threat; default unchanged)", async () => {
    let runs = 0;
    const receiver = createMailReceiver({ secret: MAIL_SECRET }).on('bounced', () => void runs++);
    for (const id of ['dlv_a', 'dlv_b', 'dlv_c']) {
      await deliver(receiver, mailDelivery('bounced', { deliveryId: id, messageId: 'msg_1' }));
    }
    expect(runs).toBe(3);
  });

  it("'message-event' dedup handles a replayed body once, whatever ids it comes with", async () => {
    let runs = 0;
    const receiver = createMailReceiver({ secret: MAIL_SECRET, dedupKey: 'message-event' }).on(
      'bounced',
      () => void runs++,
    );
    const results = [];
    for (const id of ['dlv_a', 'dlv_b', 'dlv_c']) {
      results.push(
        (await deliver(receiver, mailDelivery('bounced', { deliveryId: id, messageId: 'msg_1' }))).kind,
      );
    }
    expect(results).toEqual(['handled', 'duplicate', 'duplicate']);
    expect(runs).toBe(1);
  });
});

describe('maxEventAgeMs on the email service (payload timestamp)', () => {
  function receiverAt(now: number, maxEventAgeMs?: number) {
    const clock = createManualClock(now);
    const handled: string[] = [];
    const receiver = createMailReceiver({ secret: MAIL_SECRET, clock, maxEventAgeMs }).onAny((event) => {
      handled.push(event.deliveryId);
    });
    return { receiver, handled };
  }

  it('refuses a timestamp older than the limit (400 event_too_old); accepts one within it', async () => {
    const late = receiverAt(MAIL_AT + 16 * MINUTE, 15 * MINUTE);
    expect(await deliver(late.receiver, mailDelivery('delivered'))).toMatchObject({
      status: 400,
      code: 'event_too_old',
    });
    expect(late.handled).toEqual([]);
    const fresh = receiverAt(MAIL_AT + 14 * MINUTE, 15 * MINUTE);
    expect(await deliver(fresh.receiver, mailDelivery('delivered'))).toMatchObject({ kind: 'handled' });
  });

  it('refuses a timestamp beyond the allowed clock skew in the future (400 event_in_future)', async () => {
    const behind = receiverAt(MAIL_AT - EVENT_CLOCK_SKEW_MS - 1, MINUTE);
    expect(await deliver(behind.receiver, mailDelivery('delivered'))).toMatchObject({
      status: 400,
      code: 'event_in_future',
    });
    const slightly = receiverAt(MAIL_AT - EVENT_CLOCK_SKEW_MS, MINUTE);
    expect(await deliver(slightly.receiver, mailDelivery('delivered'))).toMatchObject({
      kind: 'handled',
    });
  });

  it('lets events without a timestamp through (the spec does not show one for them)', async () => {
    const { receiver, handled } = receiverAt(MAIL_AT + 365 * 86_400_000, MINUTE);
    const account = mailDelivery('ip_paused', { payload: { event: 'ip_paused', client_id: 'c_1' } });
    const sending = mailDelivery('delivered', { payload: capturedDelivered() });
    expect(await deliver(receiver, account)).toMatchObject({ kind: 'handled' });
    expect(await deliver(receiver, sending)).toMatchObject({ kind: 'handled' });
    expect(handled).toHaveLength(2);
  });

  it('checks an unknown event carrying a timestamp, and refuses one that is not a string', async () => {
    const { receiver } = receiverAt(MAIL_AT + 2 * MINUTE, MINUTE);
    const old = mailDelivery('message.archived', {
      payload: { event: 'message.archived', client_id: 'c', timestamp: '2024-05-01T10:00:00.123Z' },
    });
    expect(await deliver(receiver, old)).toMatchObject({ status: 400, code: 'event_too_old' });
    const numeric = mailDelivery('message.archived', {
      payload: { event: 'message.archived', client_id: 'c', timestamp: MAIL_AT },
    });
    expect(await deliver(receiver, numeric)).toMatchObject({ status: 400, code: 'invalid_payload' });
  });

  it('is off by default: a year-old delivery is handled', async () => {
    const { receiver, handled } = receiverAt(MAIL_AT + 365 * 86_400_000);
    expect(await deliver(receiver, mailDelivery('delivered'))).toMatchObject({ kind: 'handled' });
    expect(handled).toHaveLength(1);
  });

  it('constructMailEvent takes maxEventAgeMs and clock', async () => {
    const { body, headers } = mailDelivery('opened');
    const clock = createManualClock(MAIL_AT + 2 * MINUTE);
    expect(
      await rejection(constructMailEvent(body, headers, MAIL_SECRET, { maxEventAgeMs: MINUTE, clock })),
    ).toEqual(['event_too_old', 400]);
    await expect(
      constructMailEvent(body, headers, MAIL_SECRET, { maxEventAgeMs: 3 * MINUTE, clock }),
    ).resolves.toMatchObject({ name: 'opened' });
  });
});

describe('maxEventAgeMs on the CRM service (envelope timestamp)', () => {
  it('refuses old and far-future envelopes, accepts fresh ones', async () => {
    const clock = createManualClock(CRM_AT + 10 * MINUTE);
    let runs = 0;
    const receiver = createCrmReceiver({ secret: CRM_SECRET, clock, maxEventAgeMs: 5 * MINUTE }).on(
      'deal.won',
      () => void runs++,
    );
    expect(await deliver(receiver, crmDelivery('deal.won'))).toMatchObject({
      status: 400,
      code: 'event_too_old',
    });
    clock.set(CRM_AT + 4 * MINUTE);
    expect(await deliver(receiver, crmDelivery('deal.won'))).toMatchObject({
      status: 200,
      kind: 'handled',
    });
    clock.set(CRM_AT - EVENT_CLOCK_SKEW_MS - 1_000);
    expect(await deliver(receiver, crmDelivery('deal.won'))).toMatchObject({
      status: 400,
      code: 'event_in_future',
    });
    expect(runs).toBe(1);
  });

  it('is off by default, and constructCrmEvent takes the option', async () => {
    const clock = createManualClock(CRM_AT + 365 * 86_400_000);
    const receiver = createCrmReceiver({ secret: CRM_SECRET, clock }).on('deal.won', () => {});
    expect(await deliver(receiver, crmDelivery('deal.won'))).toMatchObject({ kind: 'handled' });
    const { body, headers } = crmDelivery('deal.won');
    expect(
      await rejection(constructCrmEvent(body, headers, CRM_SECRET, { maxEventAgeMs: MINUTE, clock })),
    ).toEqual(['event_too_old', 400]);
  });

  it.each([0, -1, 1.5, '60000', Number.NaN])('maxEventAgeMs %s is options_invalid at creation', (value) => {
    for (const create of [createCrmReceiver, createMailReceiver] as const) {
      expect(() => create({ secret: CRM_SECRET, maxEventAgeMs: value as number })).toThrow(
        expect.objectContaining({ code: 'options_invalid' }),
      );
    }
  });
});
