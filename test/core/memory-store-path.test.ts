/**
 * A memory store passed as `dedup` takes the receiver's synchronous path (core/delivery/run.ts): its
 * synchronous core answers the claim and the settle, so no promise of its `DedupStore` methods is
 * made, and the delivery's verdict is the same as through any store: handled once, then a duplicate;
 * a throwing handler releases the claim so the retry runs.
 */
import { createCrmReceiver, createMemoryStore } from '@svc/webhooks';
import { describe, expect, it, vi } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver } from '../receivers/support.js';

describe('a memory store passed as dedup', () => {
  it('is claimed and settled through its synchronous core, with the same verdicts', async () => {
    const store = createMemoryStore({ maxKeys: 100 });
    const calls = [vi.spyOn(store, 'claim'), vi.spyOn(store, 'complete'), vi.spyOn(store, 'release')];
    let fail = true;
    let runs = 0;
    const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: store, logger: false }).on(
      'deal.won',
      () => {
        runs++;
        if (fail) throw new Error('db down');
      },
    );
    const delivery = crmDelivery('deal.won');
    expect(await deliver(receiver, delivery)).toMatchObject({ kind: 'failed', code: 'handler_failed' });
    fail = false;
    expect(await deliver(receiver, delivery)).toMatchObject({ kind: 'handled' });
    expect(await deliver(receiver, delivery)).toMatchObject({ kind: 'duplicate' });
    expect(runs).toBe(2);
    expect(store.size).toBe(1);
    for (const call of calls) expect(call).not.toHaveBeenCalled();
  });

  it('an async handler still runs under the deadline, settled through the same core', async () => {
    const store = createMemoryStore();
    const complete = vi.spyOn(store, 'complete');
    const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: store, logger: false }).on(
      'deal.won',
      async () => {},
    );
    const delivery = crmDelivery('deal.won');
    expect(await deliver(receiver, delivery)).toMatchObject({ kind: 'handled' });
    expect(await deliver(receiver, delivery)).toMatchObject({ kind: 'duplicate' });
    expect(complete).not.toHaveBeenCalled();
  });
});
