/**
 * Nothing authentic refused: with an inbox, email deliveries whose signature verifies but whose payload
 * fails the schema (`bounced` without `provider`) are stored `quarantined` with the schema's issues
 * (paths and codes, never values) and answered 2xx, so the service neither retries nor pauses the
 * webhook. After the fix (a version whose schema accepts them), a re-drive runs each once.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailReceiver } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createInboxWorker } from '@svc/webhooks/sqlite';
import { createMailEmitter, createSignedRequest, createVirtualClock } from '@svc/webhooks/testing';
import { afterAll, expect, it } from 'vitest';
import { MAIL_EVENT_NAMES } from '../../src/mail/event-names.js';
import { parseMailEvent } from '../../src/mail/parse-event.js';
import { MAIL_DEFAULT_TTL_MS } from '../../src/mail/receiver.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { resolveOptions } from '../../src/receiver/receiver-options.js';
import { sqliteDatabase, uniqueTable } from './support.js';

const db = sqliteDatabase();

afterAll(() => db.close());

/** The receiver of the next version: the same, with `provider` optional in its schema. */
function fixedMailReceiver(secret: string, handoff: ReturnType<typeof db.inbox>) {
  const resolved = resolveOptions('fixed', { secret, handoff, logger: () => {} }, MAIL_DEFAULT_TTL_MS);
  return createReceiver(
    {
      service: 'mail',
      headerNames: { event: 'x-svcmail-event', deliveryId: 'x-svcmail-id', signature: 'x-svcmail-sig' },
      knownNames: MAIL_EVENT_NAMES,
      parse: (body, headers, secretIndex) => {
        const payload = JSON.parse(new TextDecoder().decode(body as Uint8Array)) as Record<string, unknown>;
        payload.provider ??= 'unknown';
        return parseMailEvent(new TextEncoder().encode(JSON.stringify(payload)), headers, { secretIndex });
      },
      dedupKey: (event) => `mail:delivery:${event.deliveryId}`,
    },
    resolved,
  );
}

it('12 authentic deliveries that fail the schema: 2xx, 12 quarantined rows, webhook not paused; re-driven after the fix, each handled once', async () => {
  const table = uniqueTable('quarantine');
  const inbox = db.inbox({ table });
  await inbox.migrate();
  const warnings: string[] = [];
  const clock = createVirtualClock();
  const mail = createMailEmitter({ clock, allowPrivateNetworks: true, seed: 12, validate: false });
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const hook = mail.createWebhook({ url, events: ['bounced'] });
  const receiver = createMailReceiver({
    secret: hook.secret,
    handoff: inbox,
    logger: (entry) => {
      if (entry.level === 'warn') warnings.push(entry.message);
    },
  });
  server.on('request', createNodeListener(receiver));
  try {
    const sent = [];
    for (let i = 0; i < 12; i++)
      sent.push(...(await mail.emit('bounced', { provider: undefined, message_id: `m_${i}` })));
    await clock.runAll();
    expect(sent.map((d) => d.attempts.map((a) => a.statusCode))).toEqual(
      Array.from({ length: 12 }, () => [200]),
    );
    expect(mail.getWebhook(hook.id).status).toBe('active');
    expect(warnings.filter((m) => m.includes('quarantined'))).toHaveLength(12);

    const { rows } = await inbox.list({ status: 'quarantined', limit: 100 });
    expect(rows).toHaveLength(12);
    for (const row of rows) {
      expect(row.lastErrorCode).toBe('invalid_payload');
      expect(row.lastErrorMessage).toContain('provider (invalid_type)');
      expect(row.lastErrorMessage).not.toContain('@'); // no value (the recipient's address) stored
    }
    // The worker never runs a quarantined row on its own.
    const runs: string[] = [];
    const fixed = fixedMailReceiver(hook.secret, inbox).on('bounced', (event) => {
      runs.push(event.deliveryId);
    });
    const worker = createInboxWorker({ receiver: fixed, inbox });
    expect(await worker.runOnce()).toBe(0);

    expect(await inbox.redrive({ status: 'quarantined' })).toBe(12);
    expect(await worker.runOnce()).toBe(12);
    expect(runs.sort()).toEqual(sent.map((d) => d.id).sort());
    expect((await inbox.list({ status: 'handled', limit: 100 })).rows).toHaveLength(12);
    expect(await worker.runOnce()).toBe(0);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

it('without a target that quarantines, the same delivery is still refused 400 invalid_payload', async () => {
  const clock = createVirtualClock();
  const mail = createMailEmitter({ clock, allowPrivateNetworks: true, seed: 13, validate: false });
  const receiver = createMailReceiver({ secret: 'whsec_'.padEnd(40, 'q'), logger: () => {} });
  const server = createServer(createNodeListener(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const hook = mail.createWebhook({ url, events: ['bounced'], secret: 'whsec_'.padEnd(40, 'q') });
    const [sent] = await mail.emit('bounced', { provider: undefined });
    expect(sent!.attempts[0]!.statusCode).toBe(400);
    expect(hook.id).toBeTruthy();
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

it("a quarantined delivery is keyed like the 'delivery-id' strategy: a long delivery id is bounded the same way", async () => {
  const table = uniqueTable('quarantine_key');
  const inbox = db.inbox({ table });
  await inbox.migrate();
  const secret = 'whsec_'.padEnd(40, 'k');
  const receiver = createMailReceiver({ secret, handoff: inbox, logger: () => {} });
  const deliveryId = `d_${'x'.repeat(240)}`; // 242 characters: `mail:delivery:<id>` is past 200
  const keyOf = (id: string) =>
    `mail:sha256:${createHash('sha256').update(`mail:delivery:${id}`).digest('hex')}`;
  for (const id of [deliveryId, 'd_short']) {
    const request = await createSignedRequest({
      service: 'mail',
      event: 'bounced',
      payload: { provider: undefined },
      secret,
      deliveryId: id,
    });
    expect((await receiver.handle(request)).status).toBe(200);
  }
  const { rows } = await inbox.list({ status: 'quarantined', limit: 10 });
  expect(Object.fromEntries(rows.map((row) => [row.deliveryId, row.dedupKey]))).toEqual({
    [deliveryId]: keyOf(deliveryId),
    d_short: 'mail:delivery:d_short',
  });
});
