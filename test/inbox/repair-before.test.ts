/** Temporary: what a re-drive without a fix does to a quarantined row on main. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailReceiver } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createInboxWorker } from '@svc/webhooks/sqlite';
import { createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import { afterAll, expect, it } from 'vitest';
import { sqliteDatabase, uniqueTable } from './support.js';

const db = sqliteDatabase();
afterAll(() => db.close());

it('a re-driven row that still fails the schema stays quarantined with its issues', async () => {
  const inbox = db.inbox({ table: uniqueTable('before') });
  await inbox.migrate();
  const clock = createVirtualClock();
  const mail = createMailEmitter({ clock, allowPrivateNetworks: true, seed: 3, validate: false });
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const hook = mail.createWebhook({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, events: ['bounced'] });
  const receiver = createMailReceiver({ secret: hook.secret, handoff: inbox, logger: false });
  receiver.on('bounced', () => {});
  server.on('request', createNodeListener(receiver));
  try {
    await mail.emit('bounced', { provider: undefined });
    await clock.runAll();
    expect(await inbox.redrive({ status: 'quarantined' })).toBe(1);
    await createInboxWorker({ receiver, inbox }).runOnce();
    const [row] = (await inbox.list({ limit: 10 })).rows;
    expect({ status: row!.status, code: row!.lastErrorCode, message: row!.lastErrorMessage }).toEqual({
      status: 'quarantined',
      code: 'invalid_payload',
      message: expect.stringContaining('provider (invalid_type)'),
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
