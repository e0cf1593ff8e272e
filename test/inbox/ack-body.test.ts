/**
 * The inbox stores the verified bytes the receive path handed over without decoding the job's base64
 * again, and reads the ordering key and event time from the receiver's parse of them instead of
 * parsing the body again; both only while the job's `body` is still the string made from them: a
 * target in between that replaces `body` gets its own body stored and read. Real receivers, real
 * SQLite file.
 */
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import type { HandoffJob } from '@svc/webhooks/handoff';
import { afterAll, expect, it, vi } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { sqliteDatabase, uniqueTable } from './support.js';

const db = sqliteDatabase();
afterAll(() => db.close());

it('stores the delivered bytes, or the body a target in between put in their place', async () => {
  const inbox = db.inbox({ table: uniqueTable('ack') });
  await inbox.migrate();
  const replaced = new TextEncoder().encode('{"replaced":true}');
  let replace = false;
  const receiver = createCrmReceiver({
    secret: CRM_SECRET,
    logger: () => {},
    handoff: {
      enqueue: (job: HandoffJob, options) => {
        if (replace) job.body = Buffer.from(replaced).toString('base64');
        return inbox.enqueue(job, options);
      },
    },
  });
  const first = crmDelivery('deal.won');
  expect((await deliver(receiver, first)).status).toBe(200);
  replace = true;
  expect((await deliver(receiver, crmDelivery('deal.won'))).status).toBe(200);

  const rows = (await inbox.list()).rows.sort((a, b) => a.id - b.id);
  const bodies = await Promise.all(rows.map(async (row) => (await inbox.show(row.id))!.body));
  expect(Buffer.from(bodies[0]!).equals(Buffer.from(first.body))).toBe(true);
  expect(Buffer.from(bodies[1]!).toString()).toBe('{"replaced":true}');
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
