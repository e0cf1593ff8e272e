/**
 * Reconciliation against a database inbox (a real SQLite file), its lock in a dedup store in the same
 * file: a delivery the service recorded as delivered but the inbox lost (a restore from an older
 * backup) is resent like one that failed, and both are back as rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailReceiver } from '@svc/webhooks';
import { createExpressMiddleware } from '@svc/webhooks/express';
import { createMailClient, createReconciler } from '@svc/webhooks/manage';
import { createSqliteInbox, createSqliteStore } from '@svc/webhooks/sqlite';
import express from 'express';
import { afterAll, expect, it } from 'vitest';
import {
  createMailApi,
  createMailEmitter,
  createVirtualClock,
  MAIL_TEST_API_KEY,
} from '../../src/testing/index.js';
import { openRawSqlite } from '../support/sqlite.js';
import { startServer } from '../testing/support/servers.js';
import { startApiServer } from './support/api-server.js';

const START = Date.parse('2025-06-02T08:00:00.000Z');
const dir = mkdtempSync(join(tmpdir(), 'reconcile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('resends what the inbox does not hold, a 2xx the inbox lost included; the rows are back', async () => {
  const path = join(dir, 'app.sqlite');
  const clock = createVirtualClock({ start: START });
  const emitter = createMailEmitter({ clock, seed: 'reconcile-inbox', allowPrivateNetworks: true });
  const api = await startApiServer((baseUrl) => createMailApi(emitter, { baseUrl }));
  const receivers = await startServer();
  const inbox = createSqliteInbox({ path });
  await inbox.migrate();
  const store = createSqliteStore({ path, clock });
  try {
    const client = createMailClient({ baseUrl: api.url, apiKey: MAIL_TEST_API_KEY, clock });
    const hook = await client.createWebhook({ url: `${receivers.url}/hooks`, events: ['bounced', 'opened'] });
    const receiver = createMailReceiver({ secret: hook.secret!, handoff: inbox, logger: false }).onAny(
      () => {},
    );
    let up = true;
    const app = express();
    app.post(
      '/hooks',
      (_req, res, next) => (up ? next() : res.status(503).end()),
      createExpressMiddleware(receiver),
    );
    receivers.use(app);

    const [kept] = await emitter.emit('opened');
    const [restored] = await emitter.emit('opened');
    up = false;
    const [failed] = await emitter.emit('bounced');
    await clock.runAll();
    up = true;
    expect(emitter.getDelivery(restored!.id).status).toBe('succeeded');
    const raw = openRawSqlite(path);
    raw.prepare('DELETE FROM webhook_inbox WHERE delivery_id = ?').all(restored!.id);
    expect([...(await inbox.held('mail', [kept!.id, restored!.id, failed!.id]))]).toEqual([kept!.id]);

    await clock.advanceTo(START + 13 * 60_000);
    const reconciler = createReconciler({ client, holder: inbox, lock: store, clock, logger: false });
    const report = await reconciler.runOnce();
    expect(report.counts).toEqual({
      foundMissing: 2,
      resent: 2,
      recovered: 2,
      notRecoverable: 0,
      historyGap: 0,
    });
    expect(report.missing.map((i) => [i.deliveryId, i.outcome])).toEqual([
      [restored!.id, 'recovered'],
      [failed!.id, 'recovered'],
    ]);
    const rows = raw.prepare('SELECT delivery_id FROM webhook_inbox ORDER BY id').all() as {
      delivery_id: string;
    }[];
    expect(rows.map((r) => r.delivery_id)).toEqual([kept!.id, restored!.id, failed!.id]);
    raw.close();
    // The window is done: a second reconciler in the same slot skips it.
    const again = await createReconciler({
      client,
      holder: inbox,
      lock: store,
      clock,
      logger: false,
    }).runOnce();
    expect([again.status, again.reason]).toEqual(['skipped', 'another reconciler reconciled this window']);
  } finally {
    await store.close?.();
    await inbox.close();
    await api.close();
    await receivers.close();
  }
});
