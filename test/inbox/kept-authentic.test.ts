/**
 * Nothing authentic refused (docs/inbox-quarantine.md "What the inbox keeps"), on real PostgreSQL and a real
 * SQLite file: with the inbox as the target, a delivery whose signature verifies but which the
 * receiver cannot run (its body is not JSON, its event header and body disagree, it has no event) is
 * stored `quarantined` with its code and answered 2xx, so the service neither retries it nor counts it
 * toward the email webhook's pause; its retry is the same row. A copy whose unsigned event header was
 * changed never takes the genuine delivery's key. What stays refused: an event older than
 * `maxEventAgeMs` (the replay defence the app asked for) and a CRM header id that differs from the
 * signed `id`. Every request is signed with node:crypto.
 */
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createInboxWorker } from '@svc/webhooks/postgres';
import { createVirtualClock } from '@svc/webhooks/testing';
import { describe, expect, it } from 'vitest';
import {
  CRM_SECRET,
  crmDelivery,
  type Delivery,
  deliver,
  MAIL_SECRET,
  mailDelivery,
  sign,
} from '../receivers/support.js';
import { type DatabaseSuite, forEachInboxDatabase, openedInboxDatabase, uniqueTable } from './support.js';

const quiet = () => {};

/** `delivery` with its event header set to `event` (the header is not signed). */
const withEventHeader = (delivery: Delivery, header: string, event: string): Delivery => ({
  ...delivery,
  headers: { ...delivery.headers, [header]: event },
});

const suite: DatabaseSuite = (name, open, close) => {
  describe(`authentic deliveries kept on ${name}`, () => {
    const database = openedInboxDatabase(open, close);

    async function setup(service: 'mail' | 'crm') {
      const inbox = database().inbox({ table: uniqueTable('kept') });
      await inbox.migrate();
      const clock = createVirtualClock({ start: Date.parse('2024-05-01T10:01:00.000Z') });
      const options = { handoff: inbox, logger: quiet, clock, maxEventAgeMs: 3_600_000 };
      const receiver =
        service === 'mail'
          ? createMailReceiver({ secret: MAIL_SECRET, requireBodyEvent: true, ...options })
          : createCrmReceiver({ secret: CRM_SECRET, ...options });
      const ran: string[] = [];
      receiver.onAny((event) => void ran.push(`${event.name} ${event.deliveryId}`));
      const quarantined = async () =>
        (await inbox.list({ status: 'quarantined', limit: 100 })).rows.map((row) => ({
          code: row.lastErrorCode,
          event: row.event,
          deliveryId: row.deliveryId,
        }));
      return { inbox, receiver, ran, quarantined, worker: () => createInboxWorker({ receiver, inbox }) };
    }

    it('email: not JSON, header and body disagreeing, no body event: 2xx and one quarantined row each', async () => {
      const { receiver, quarantined } = await setup('mail');
      const text = 'delivered, but not JSON';
      const notJson = mailDelivery('delivered', { rawBody: text });
      const mismatch = withEventHeader(mailDelivery('delivered'), 'x-svcmail-event', 'bounced');
      const { event: _event, ...withoutEvent } = {
        event: 'opened',
        client_id: 'client_1',
        message_id: 'msg_2',
        timestamp: '2024-05-01T10:00:00.123Z',
      };
      const noEvent = mailDelivery('opened', { payload: withoutEvent });
      for (const delivery of [notJson, mismatch, noEvent]) {
        for (let copy = 0; copy < 2; copy++) {
          // The retry of the same delivery is the same row.
          const answer = await deliver(receiver, delivery);
          expect(answer.status, `${delivery.deliveryId} copy ${copy}`).toBe(200);
        }
      }
      expect(notJson.headers['x-svcmail-sig']).toBe(sign(text, MAIL_SECRET));
      expect((await quarantined()).sort((a, b) => a.code!.localeCompare(b.code!))).toEqual([
        { code: 'event_mismatch', event: 'delivered', deliveryId: mismatch.deliveryId },
        { code: 'event_missing', event: 'opened', deliveryId: noEvent.deliveryId },
        { code: 'invalid_json', event: 'delivered', deliveryId: notJson.deliveryId },
      ]);
    });

    it('a copy with a changed event header does not take the genuine delivery’s key: the genuine one runs once', async () => {
      const { receiver, ran, quarantined, worker } = await setup('mail');
      const genuine = mailDelivery('delivered');
      const altered = withEventHeader(genuine, 'x-svcmail-event', 'bounced');
      expect((await deliver(receiver, altered)).status).toBe(200);
      expect(await deliver(receiver, genuine)).toMatchObject({ status: 200, kind: 'queued' });
      expect(await deliver(receiver, genuine)).toMatchObject({ status: 200, kind: 'duplicate' });
      expect(await worker().runOnce()).toBe(1);
      expect(ran).toEqual([`delivered ${genuine.deliveryId}`]);
      expect((await quarantined()).map((row) => row.code)).toEqual(['event_mismatch']);
    });

    it('CRM: not JSON, header and body disagreeing: 2xx and one quarantined row each, keyed by the signed id', async () => {
      const { receiver, quarantined } = await setup('crm');
      const mismatch = withEventHeader(crmDelivery('deal.won'), 'x-svc-event', 'deal.lost');
      const notJson = crmDelivery('deal.won', { rawBody: 'not json' });
      for (const delivery of [mismatch, notJson]) {
        expect((await deliver(receiver, delivery)).status).toBe(200);
        expect((await deliver(receiver, delivery)).status).toBe(200);
      }
      // The same body under a fresh (unsigned) header id: still the signed id's row.
      const replayed = {
        ...mismatch,
        headers: { ...mismatch.headers, 'x-svc-delivery': crypto.randomUUID() },
      };
      expect(await deliver(receiver, replayed)).toMatchObject({ status: 200, kind: 'duplicate' });
      expect((await quarantined()).sort((a, b) => a.code!.localeCompare(b.code!))).toEqual([
        { code: 'event_mismatch', event: 'deal.won', deliveryId: mismatch.deliveryId },
        { code: 'invalid_json', event: 'deal.won', deliveryId: notJson.deliveryId },
      ]);
    });

    it('still refused: an event older than maxEventAgeMs, a CRM header id unlike the signed id; no row', async () => {
      const mail = await setup('mail');
      const stale = mailDelivery('delivered', {
        payload: {
          event: 'delivered',
          client_id: 'client_1',
          message_id: 'msg_1',
          to: 'ana@example.com',
          provider: 'gmail',
          timestamp: '2024-05-01T08:00:00.000Z',
        },
      });
      expect(await deliver(mail.receiver, stale)).toMatchObject({ status: 400, code: 'event_too_old' });
      expect((await mail.inbox.list({ limit: 10 })).rows).toEqual([]);
      const crm = await setup('crm');
      const moved = crmDelivery('deal.won', { headerDeliveryId: crypto.randomUUID() });
      expect(await deliver(crm.receiver, moved)).toMatchObject({ status: 400, code: 'delivery_id_mismatch' });
      expect((await crm.inbox.list({ limit: 10 })).rows).toEqual([]);
    });
  });
};

forEachInboxDatabase(suite);
