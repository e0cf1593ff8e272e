/**
 * The inbox stores the verified bytes the receive path handed over (no queue job, no base64), with
 * the signature as received, and reads the ordering key and event time from the receiver's parse of
 * them instead of parsing the body again. A queue job is refused: it carries no signature to
 * authenticate a row by. Real receivers, real SQLite file.
 */
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import type { HandoffJob } from '@svc/webhooks/handoff';
import { afterAll, expect, it, vi } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { sqliteDatabase, uniqueTable } from './support.js';

const db = sqliteDatabase();
afterAll(() => db.close());

it('stores the delivered bytes as they were verified; a queue job is refused (it carries no signature)', async () => {
  const inbox = db.inbox({ table: uniqueTable('ack') });
  await inbox.migrate();
  const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {}, handoff: inbox });
  const first = crmDelivery('deal.won');
  expect((await deliver(receiver, first)).status).toBe(200);
  const [row] = (await inbox.list()).rows;
  const stored = (await inbox.show(row!.id))!;
  expect(Buffer.from(stored.body).equals(Buffer.from(first.body))).toBe(true);
  expect(stored.headers['x-svc-signature']).toBe(first.headers['x-svc-signature']);

  const job: HandoffJob = {
    v: 2,
    service: 'crm',
    deliveryId: 'd_job',
    event: 'deal.won',
    dedupKey: 'crm:delivery:d_job',
    receivedAt: Date.now(),
    secretIndex: 0,
    headers: {},
    body: Buffer.from('{"replaced":true}').toString('base64'),
    mac: '0'.repeat(64),
  };
  await expect(inbox.enqueue(job, { signal: AbortSignal.timeout(5_000) })).rejects.toMatchObject({
    code: 'options_invalid',
  });
  expect((await inbox.list()).rows).toHaveLength(1);
});

it("parses an acknowledged body once: the ordering key and event time come from the receiver's parse", async () => {
  const table = uniqueTable('ack');
  const inbox = db.inbox({ table });
  await inbox.migrate();
  const crm = createCrmReceiver({ secret: CRM_SECRET, logger: () => {}, handoff: inbox });
  const mail = createMailReceiver({ secret: MAIL_SECRET, logger: () => {}, handoff: inbox });
  const deal = crmDelivery('deal.won', { data: { deal_id: 'd_7', title: 'Renewal', value: 5 } });
  const dealAt = Date.parse(JSON.parse(new TextDecoder().decode(deal.body)).timestamp);
  const opened = mailDelivery('opened', {
    payload: {
      event: 'opened',
      client_id: 'cl_1',
      message_id: 'msg_7',
      to: 'ana@example.com',
      timestamp: '2024-05-01T10:00:06.000Z',
    },
  });
  const parse = vi.spyOn(JSON, 'parse');
  try {
    expect((await deliver(crm, deal)).status).toBe(200);
    expect((await deliver(mail, opened)).status).toBe(200);
    expect(parse).toHaveBeenCalledTimes(2);
  } finally {
    parse.mockRestore();
  }
  const rows = await db.sql(`SELECT delivery_id, ordering_key, event_at FROM ${table} ORDER BY id`);
  expect(rows.map((r) => [r.delivery_id, r.ordering_key, Number(r.event_at)])).toEqual([
    [deal.deliveryId, 'crm:deal:d_7', dealAt],
    [opened.deliveryId, 'mail:message:msg_7', Date.parse('2024-05-01T10:00:06.000Z')],
  ]);
});
