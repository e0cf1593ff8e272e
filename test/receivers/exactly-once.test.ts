/**
 * The "must be shown by tests", through the receivers, on every shipped store backed by a
 * real server (memory, Redis via ioredis and node-redis, Postgres via pg and PGlite).
 */
import { type Clock, createCrmReceiver, createMailReceiver, type WebhookError } from '@svc/webhooks';
import { expect, it } from 'vitest';
import { createManualClock } from '../support/clock.js';
import { forEachStore } from '../support/stores.js';
import {
  CRM_SECRET,
  crmDelivery,
  type Delivered,
  deferred,
  deliver,
  MAIL_SECRET,
  mailDelivery,
  RETRY_INVITING,
} from './support.js';

/** A clock reading `base`'s time whose timers run only on {@link fireDue} (those due by then). */
function heldTimers(base: Clock): { clock: Clock; fireDue(): Promise<void> } {
  const pending = new Map<number, { at: number; callback: () => unknown }>();
  let next = 0;
  return {
    clock: {
      now: () => base.now(),
      setTimeout(callback, ms) {
        pending.set(++next, { at: base.now() + ms, callback });
        return next;
      },
      clearTimeout(handle) {
        pending.delete(handle as number);
      },
    },
    async fireDue() {
      for (const [handle, timer] of [...pending].sort((a, b) => a[1].at - b[1].at)) {
        if (timer.at > base.now()) continue;
        pending.delete(handle);
        await timer.callback();
      }
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectAckOrRetry(outcomes: readonly Delivered[]): void {
  for (const outcome of outcomes) {
    const ok = (outcome.status >= 200 && outcome.status < 300) || RETRY_INVITING.has(outcome.status);
    expect(ok, `status ${outcome.status} (${outcome.code})`).toBe(true);
  }
}

forEachStore((kind) => {
  it('200 concurrent copies of one delivery: the handler runs exactly once', async () => {
    const receiver = createMailReceiver({ secret: MAIL_SECRET, dedup: await kind.create() });
    let runs = 0;
    receiver.on('delivered', async () => {
      runs++;
      await sleep(25);
    });
    const delivery = mailDelivery('delivered');
    const outcomes = await Promise.all(Array.from({ length: 200 }, () => deliver(receiver, delivery)));
    expect(runs).toBe(1);
    expectAckOrRetry(outcomes);
    expect(outcomes.filter((o) => o.kind === 'handled')).toHaveLength(1);
    // Whatever answered retry-later, the retries now find it completed.
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(runs).toBe(1);
  });

  it('a handler that throws on the first attempt: 5xx, then the retry runs it and succeeds', async () => {
    const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: await kind.create() });
    const handled: string[] = [];
    let attempts = 0;
    receiver.on('deal.won', async (event) => {
      if (++attempts === 1) throw new Error('downstream unavailable');
      handled.push(event.deliveryId);
    });
    const delivery = crmDelivery('deal.won');
    const first = await deliver(receiver, delivery);
    expect(first.status).toBeGreaterThanOrEqual(500);
    expect(first.code).toBe('handler_failed');
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'handled' });
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(handled).toEqual([delivery.deliveryId]);
  });

  it('a worker that claims and never finishes: a retry after the lease takes over; its late complete is refused', async () => {
    const clock = createManualClock(Date.now());
    const store = await kind.create({ clock });
    const receiver = createMailReceiver({ secret: MAIL_SECRET, dedup: store, clock, leaseMs: 30_000 });
    let runs = 0;
    receiver.on('bounced', () => void runs++);
    const delivery = mailDelivery('bounced');
    const key = `mail:delivery:${delivery.deliveryId}`;

    // The crashed worker: it claimed the delivery and was never heard of again.
    const stale = await store.claim(key, { leaseMs: 30_000 });
    expect(stale.status).toBe('claimed');
    if (stale.status !== 'claimed') return;

    expect(await deliver(receiver, delivery)).toMatchObject({ status: 409, code: 'delivery_in_progress' });
    expect(runs).toBe(0);
    clock.advance(30_001);
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'handled' });
    expect(runs).toBe(1);
    // The stale worker wakes up: its writes carry the old token and are refused.
    expect(await store.complete(key, stale.token, { ttlMs: 60_000 })).toBe(false);
    expect(await store.release(key, stale.token)).toBe(false);
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(runs).toBe(1);
  });

  it('a receiver whose handler outlives its lease: the retry takes over, the late complete is refused (lease_lost)', async () => {
    const clock = createManualClock(Date.now());
    const store = await kind.create({ clock });
    // The stuck receiver's timers (its handler deadline, its lease turns) fire only when the test says:
    // on runtime timers, a lease turn could land between the jump past the lease and the healthy
    // receiver's claim on a loaded machine, and extend the lease it is meant to have lost.
    const timers = heldTimers(clock);
    const stuck = createMailReceiver({
      secret: MAIL_SECRET,
      dedup: store,
      clock: timers.clock,
      timeoutMs: 40,
      leaseMs: 1_000,
    });
    const healthy = createMailReceiver({
      secret: MAIL_SECRET,
      dedup: store,
      clock,
      timeoutMs: 500,
      leaseMs: 1_000,
    });
    const gate = deferred();
    const started = deferred();
    const reported: Array<{ phase: string; code: unknown }> = [];
    stuck.on('delivered', () => {
      started.resolve();
      return gate.promise;
    });
    stuck.onError(
      (error, info) => void reported.push({ phase: info.phase, code: (error as WebhookError).code }),
    );
    let healthyRuns = 0;
    healthy.on('delivered', () => void healthyRuns++);
    const delivery = mailDelivery('delivered');

    const first = deliver(stuck, delivery);
    await started.promise;
    clock.advance(40);
    await timers.fireDue();
    expect(await first).toMatchObject({ status: 503, code: 'handler_timeout' });
    expect(await deliver(healthy, delivery)).toMatchObject({ status: 409 });
    // Past the lease, with none of the stuck receiver's lease turns run: it has lost the claim.
    clock.advance(1_001);
    expect(await deliver(healthy, delivery)).toMatchObject({ status: 200, kind: 'handled' });
    gate.resolve();
    await expect.poll(() => reported.map((r) => r.phase)).toContain('complete');
    expect(reported).toContainEqual({ phase: 'complete', code: 'lease_lost' });
    expect(await deliver(healthy, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(healthyRuns).toBe(1);
  });

  it("`delivered` twice for one message_id: once under 'message-event', twice under 'delivery-id'", async () => {
    const dedup = await kind.create();
    const byMessage = createMailReceiver({ secret: MAIL_SECRET, dedup, dedupKey: 'message-event' });
    const byDelivery = createMailReceiver({ secret: MAIL_SECRET, dedup, dedupKey: 'delivery-id' });
    const runs = { message: 0, delivery: 0 };
    byMessage.on('delivered', () => void runs.message++);
    byDelivery.on('delivered', () => void runs.delivery++);
    const messageId = `msg_${Math.random().toString(36).slice(2)}`;
    // email-service §6 rule 2: accepted by the server, then confirmed: two deliveries, two ids.
    const accepted = mailDelivery('delivered', { messageId });
    const confirmed = mailDelivery('delivered', { messageId });
    expect(accepted.deliveryId).not.toBe(confirmed.deliveryId);

    expect((await deliver(byMessage, accepted)).kind).toBe('handled');
    expect((await deliver(byMessage, confirmed)).kind).toBe('duplicate');
    expect((await deliver(byDelivery, accepted)).kind).toBe('handled');
    expect((await deliver(byDelivery, confirmed)).kind).toBe('handled');
    expect(runs).toEqual({ message: 1, delivery: 2 });
    // Another event of the same message is a different key.
    expect((await deliver(byMessage, mailDelivery('bounced', { messageId }))).kind).toBe('ignored');
  });
});

forEachStore(
  (kind) => {
    it('Redis stopped mid-run: 503 while down, no handler runs unclaimed, retries processed after restart', async () => {
      const receiver = createCrmReceiver({
        secret: CRM_SECRET,
        dedup: await kind.create(),
        storeTimeoutMs: 1_000,
      });
      const runs = new Map<string, number>();
      receiver.on(
        ['deal.won', 'deal.lost'],
        (event) => void runs.set(event.deliveryId, (runs.get(event.deliveryId) ?? 0) + 1),
      );
      const before = crmDelivery('deal.won');
      expect((await deliver(receiver, before)).kind).toBe('handled');

      await kind.redis!.stop();
      const during = [crmDelivery('deal.won'), crmDelivery('deal.lost'), crmDelivery('deal.won')];
      for (const delivery of during) {
        const outcome = await deliver(receiver, delivery);
        expect(outcome).toMatchObject({ status: 503, code: 'store_unavailable', kind: 'failed' });
      }
      expect(await deliver(receiver, before)).toMatchObject({ status: 503 });
      expect([...runs.keys()]).toEqual([before.deliveryId]);

      await kind.redis!.start();
      // The sender's retries: keep retrying each delivery until acknowledged, as the services do.
      for (const delivery of during) {
        let outcome = await deliver(receiver, delivery);
        for (let i = 0; i < 100 && outcome.status === 503; i++) {
          await sleep(100);
          outcome = await deliver(receiver, delivery);
        }
        expect(outcome).toMatchObject({ status: 200, kind: 'handled' });
      }
      for (const delivery of during) expect(runs.get(delivery.deliveryId)).toBe(1);
      // The completed record written before the outage survived it (SIGTERM saves the data).
      expect(await deliver(receiver, before)).toMatchObject({ status: 200, kind: 'duplicate' });
      expect(runs.get(before.deliveryId)).toBe(1);
    }, 60_000);
  },
  ['redis-ioredis', 'redis-node-redis'],
);
