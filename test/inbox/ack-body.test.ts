/**
 * The inbox stores the verified bytes the receive path handed over without decoding the job's base64
 * again, and only while the job's `body` is still the string made from them: a target in between
 * that replaces `body` gets its own body stored. Real receiver, real SQLite file.
 */
import { createCrmReceiver } from '@svc/webhooks';
import type { HandoffJob } from '@svc/webhooks/handoff';
import { afterAll, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver } from '../receivers/support.js';
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
