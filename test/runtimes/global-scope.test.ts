/**
 * What workerd refuses in a Worker's global scope (random values, timers, I/O) and lacks without
 * nodejs_compat (`process`) is never touched by CREATING receivers, a memory store or a fetch
 * handler: those may be module constants. The memory store draws its randomness at its first claim.
 * (The same proven in workerd itself: test/runtimes/workers-docs.test.ts and run.mts.)
 */
import { createCrmReceiver, createMailReceiver, createMemoryStore } from '@svc/webhooks';
import { createFetchHandler } from '@svc/webhooks/fetch';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CRM_SECRET, MAIL_SECRET, mailDelivery } from '../adapters/support/deliveries.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('creating receivers in global scope', () => {
  it('draws no random value, sets no timer and reads no process', async () => {
    const random = vi.spyOn(globalThis.crypto, 'getRandomValues');
    const timeout = vi.spyOn(globalThis, 'setTimeout');
    const interval = vi.spyOn(globalThis, 'setInterval');
    const processRead = vi.fn();
    const realProcess = globalThis.process;
    const guarded = new Proxy(realProcess, {
      get(target, key, receiver) {
        processRead(key);
        return Reflect.get(target, key, receiver);
      },
    });
    vi.stubGlobal('process', guarded);
    let handler: (request: Request) => Promise<Response>;
    try {
      const mail = createMailReceiver({ secret: MAIL_SECRET }).onAny(() => undefined);
      const crm = createCrmReceiver({ secret: CRM_SECRET, dedup: createMemoryStore({ maxKeys: 10 }) });
      handler = createFetchHandler({ '/webhooks/mail': mail, '/webhooks/crm': crm });
    } finally {
      vi.unstubAllGlobals();
    }
    expect(random).not.toHaveBeenCalled();
    expect(timeout).not.toHaveBeenCalled();
    expect(interval).not.toHaveBeenCalled();
    expect(processRead.mock.calls.map(([key]) => key).filter((key) => key !== 'getBuiltinModule')).toEqual(
      [],
    );

    // The first delivery draws the store's seed and token prefix.
    const delivery = mailDelivery();
    const response = await handler(
      new Request('http://localhost/webhooks/mail', {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      }),
    );
    expect(response.status).toBe(200);
    expect(random).toHaveBeenCalled();
  });
});
