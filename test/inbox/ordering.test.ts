/**
 * In order per entity: a CRM deal's `deal.created`, three `deal.stage_changed` and `deal.won`, where
 * the early ones' first attempts fail (the inbox insert refused, 503) so the CRM service's retries
 * bring them in after the later ones. The worker applies them in event-timestamp order; an event that
 * arrives after a newer one of its deal was handled is `superseded` (the stale guard) and never runs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCrmReceiver } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createInboxWorker, type Inbox } from '@svc/webhooks/sqlite';
import { createCrmEmitter, createVirtualClock } from '@svc/webhooks/testing';
import { afterAll, expect, it } from 'vitest';
import { sqliteDatabase, uniqueTable } from './support.js';

const db = sqliteDatabase();
afterAll(() => db.close());

it('a deal’s events arriving out of order run in timestamp order; a late older one is superseded', async () => {
  const inbox = db.inbox({ table: uniqueTable('ordering') });
  await inbox.migrate();
  const clock = createVirtualClock({ start: Date.parse('2026-11-27T10:00:00.000Z') });
  const crm = createCrmEmitter({ clock, allowPrivateNetworks: true, seed: 6 });
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const hook = crm.createWebhook({
    name: 'deals',
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    events: ['deal.created', 'deal.stage_changed', 'deal.won'],
  });
  // The first attempt of these stages finds the database refusing the insert: 503, retried by the service.
  const failFirst = new Set(['new', 's1', 's4']);
  // The inbox's own write (what a receiver hands it: the verified bytes), failing once per stage.
  type Receipt = { body: Uint8Array };
  const own = inbox as unknown as { storeDelivery(receipt: Receipt): Promise<unknown> };
  const handoff = {
    ...inbox,
    storeDelivery: (receipt: Receipt) => {
      const data = JSON.parse(Buffer.from(receipt.body).toString()).data as { stage_id?: string };
      if (data.stage_id && failFirst.delete(data.stage_id))
        return Promise.reject(new Error('database restarting'));
      return own.storeDelivery(receipt);
    },
  } as Inbox;
  const applied: string[] = [];
  const receiver = createCrmReceiver({ secret: hook.secret, handoff, logger: () => {} });
  receiver.on('deal.created', (event) => {
    applied.push(`created:${event.data.stage_id}`);
  });
  receiver.on('deal.stage_changed', (event) => {
    applied.push(`stage:${event.data.stage_id}`);
  });
  receiver.on('deal.won', () => {
    applied.push('won');
  });
  server.on('request', createNodeListener(receiver));
  const worker = createInboxWorker({ receiver, inbox });
  try {
    const deal = { deal_id: 'deal_7', title: 'Fleet renewal' };
    await crm.emit('deal.created', { ...deal, stage_id: 'new', value: 1_000, contact_id: 'c_1' });
    await clock.advance(100); // each event 100 ms after the last, by its `timestamp`
    for (const stage of ['s1', 's2', 's3']) {
      await crm.emit('deal.stage_changed', { ...deal, stage_id: stage });
      await clock.advance(100);
    }
    await crm.emit('deal.won', { ...deal, value: 1_000 });
    await clock.advance(5_000); // the retries of `new` and `s1` arrive now, after `won`
    const arrival = (await inbox.list()).rows.reverse().map((r) => r.event);
    expect(arrival).toEqual([
      'deal.stage_changed',
      'deal.stage_changed',
      'deal.won',
      'deal.created',
      'deal.stage_changed',
    ]);

    expect(await worker.runOnce()).toBe(5);
    expect(applied).toEqual(['created:new', 'stage:s1', 'stage:s2', 'stage:s3', 'won']);

    // The stale guard: `s4` happened before a `won` that is handled first; its retry arrives late.
    await clock.advance(100);
    await crm.emit('deal.stage_changed', { ...deal, stage_id: 's4' });
    await clock.advance(100);
    const [lateWon] = await crm.emit('deal.won', { ...deal, value: 1_200 });
    expect(await worker.runOnce()).toBe(1);
    await clock.advance(5_000); // s4's retry
    await worker.runOnce();
    expect(applied.slice(5)).toEqual(['won']);
    const [s4] = (await inbox.list({ status: 'superseded' })).rows;
    expect(s4).toMatchObject({ event: 'deal.stage_changed', orderingKey: 'crm:deal:deal_7', attempts: 1 });
    expect((await inbox.list({ status: 'handled' })).rows.map((r) => r.deliveryId)).toContain(lateWon!.id);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
