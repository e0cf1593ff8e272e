/**
 * The one delivery lifecycle (src/core/delivery/run.ts) over the claim port: with the memory store's
 * synchronous claims and handlers that return nothing the verdict comes back without a promise and
 * without a scheduler entry; a delivery given a claim it already holds (`Delivery.held`, the seam of
 * the database inbox) is not claimed again and settles, and keeps its lease, through that claim.
 * Virtual time: nothing waits on the wall clock.
 */
import { createMemoryStore } from '@svc/webhooks';
import { createVirtualClock } from '@svc/webhooks/testing';
import { describe, expect, it, vi } from 'vitest';
import { type Delivery, type DeliverySettings, runDelivery } from '../../src/core/delivery/run.js';
import type { DispatchableEvent } from '../../src/core/handler-registry.js';
import type { WebhookHandler } from '../../src/core/handler-types.js';
import { createScheduler } from '../../src/core/request-timers.js';
import type { AsyncHeld, Claims, Settled } from '../../src/dedup/claims.js';
import { claimsOf } from '../../src/dedup/store-claims.js';
import { deferred } from '../receivers/support.js';

const TERMS = { leaseMs: 3_000, ttlMs: 60_000, callTimeoutMs: 2_000 };
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function settingsWith(clock: ReturnType<typeof createVirtualClock>, claims: Claims): DeliverySettings {
  return { ...TERMS, claims, clock, logger: undefined, hooks: [], scheduler: createScheduler(clock) };
}

function delivery(
  clock: ReturnType<typeof createVirtualClock>,
  handler: WebhookHandler<DispatchableEvent>,
  extra: Partial<Delivery> = {},
): Delivery {
  const deliveryId = `dlv_${Math.random().toString(36).slice(2)}`;
  return {
    service: 'mail',
    event: { name: 'delivered', known: true, deliveryId },
    handlers: [handler],
    dedupKey: `mail:delivery:${deliveryId}`,
    startedAt: clock.now(),
    timeoutMs: 1_000,
    upstream: undefined,
    ...extra,
  };
}

/** A held claim of the kind an inbox row is: every write recorded, answers chosen by the test. */
function heldRow(answers: { complete?: Settled; extend?: Settled } = {}) {
  const writes: string[] = [];
  const held: AsyncHeld = {
    sync: false,
    token: '7',
    leaseEndsAt: 0,
    complete: async () => {
      writes.push('complete');
      return answers.complete ?? true;
    },
    release: async () => {
      writes.push('release');
      return true;
    },
    extend: async () => {
      writes.push('extend');
      return answers.extend ?? true;
    },
  };
  return { held, writes };
}

describe('the memory store path', () => {
  it('answers without a promise, a scheduler entry or a call of the store’s promise methods', () => {
    const clock = createVirtualClock({ start: 0 });
    const store = createMemoryStore({ clock });
    const spies = [vi.spyOn(store, 'claim'), vi.spyOn(store, 'complete'), vi.spyOn(store, 'release')];
    const settings = settingsWith(clock, claimsOf(store, TERMS));
    expect(settings.claims.sync).toBe(true);
    let runs = 0;
    const once = delivery(clock, () => {
      runs++;
    });
    const first = runDelivery(settings, once);
    expect(first).not.toBeInstanceOf(Promise);
    expect(first).toMatchObject({ kind: 'handled' });
    expect(runDelivery(settings, once)).toMatchObject({ kind: 'duplicate' });
    const throwing = delivery(clock, () => {
      throw new Error('db down');
    });
    expect(runDelivery(settings, throwing)).toMatchObject({ kind: 'failed', code: 'handler_failed' });
    // Released: the retry runs.
    expect(runDelivery(settings, { ...throwing, handlers: [() => {}] })).toMatchObject({ kind: 'handled' });
    expect(runs).toBe(1);
    expect(clock.pending()).toBe(0);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it('a busy key answers delivery_in_progress with a retry after the lease', async () => {
    const clock = createVirtualClock({ start: 0 });
    const settings = settingsWith(clock, claimsOf(createMemoryStore({ clock }), TERMS));
    const gate = deferred();
    const slow = delivery(clock, () => gate.promise);
    const first = runDelivery(settings, slow);
    expect(first).toBeInstanceOf(Promise);
    expect(runDelivery(settings, slow)).toMatchObject({ code: 'delivery_in_progress', retryAfterMs: 3_000 });
    gate.resolve();
    expect(await first).toMatchObject({ kind: 'handled' });
    expect(runDelivery(settings, slow)).toMatchObject({ kind: 'duplicate' });
  });
});

describe('a delivery that already holds its claim', () => {
  const unused: Claims = {
    sync: false,
    claim: () => {
      throw new Error('a held delivery must not claim');
    },
  };

  it('is not claimed again and completes through its held claim', async () => {
    const clock = createVirtualClock({ start: 0 });
    const { held, writes } = heldRow();
    const verdict = runDelivery(
      settingsWith(clock, unused),
      delivery(clock, () => {}, { held }),
    );
    expect(await verdict).toMatchObject({ kind: 'handled' });
    expect(writes).toEqual(['complete']);
  });

  it('releases its held claim when a handler throws', async () => {
    const clock = createVirtualClock({ start: 0 });
    const { held, writes } = heldRow();
    const failing = delivery(
      clock,
      async () => {
        throw new Error('db down');
      },
      { held },
    );
    expect(await runDelivery(settingsWith(clock, unused), failing)).toMatchObject({ code: 'handler_failed' });
    expect(writes).toEqual(['release']);
  });

  it('extends its lease through the held claim while the handlers run, past the deadline too', async () => {
    const clock = createVirtualClock({ start: 0 });
    const { held, writes } = heldRow();
    const gate = deferred();
    const late: Promise<unknown>[] = [];
    const slow = delivery(clock, () => gate.promise, { held, waitUntil: (work) => late.push(work) });
    const verdict = runDelivery(settingsWith(clock, unused), slow);
    await clock.advance(1_000); // a third of the lease, and the deadline
    expect(await verdict).toMatchObject({ code: 'handler_timeout' });
    await clock.advance(2_000);
    expect(writes).toEqual(['extend', 'extend', 'extend']);
    gate.resolve();
    await Promise.all(late);
    expect(writes).toEqual(['extend', 'extend', 'extend', 'complete']);
    expect(clock.pending()).toBe(0);
  });

  it('a held claim whose completion is fenced off reports lease_lost', async () => {
    const clock = createVirtualClock({ start: 0 });
    const { held } = heldRow({ complete: false });
    const reports: unknown[] = [];
    const settings: DeliverySettings = {
      ...settingsWith(clock, unused),
      hooks: [(error) => void reports.push((error as { code?: string }).code)],
    };
    expect(
      await runDelivery(
        settings,
        delivery(clock, () => {}, { held }),
      ),
    ).toMatchObject({ kind: 'handled' });
    await turn();
    expect(reports).toEqual(['lease_lost']);
  });
});
