import { createServer } from 'node:http';
import { createFetchHandler } from '@svc/webhooks/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getNodeCrypto, resetNodeCryptoCache } from '../../src/verify/node-crypto.js';
import { type ConformanceTarget, conformance } from './conformance.js';
import { mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { fetchListener, listen, listenerTarget, PATHS } from './support/servers.js';
import { slowClientSuite } from './support/slow-clients.js';

async function start(): Promise<ConformanceTarget> {
  const { mail, crm, handled } = createTestReceivers({ maxBodyBytes: 64 * 1024 });
  return listenerTarget(fetchListener(createFetchHandler({ [PATHS.mail]: mail, [PATHS.crm]: crm })), handled);
}

describe('fetch handler', () => {
  let target: ConformanceTarget;
  beforeAll(async () => {
    target = await start();
  });
  afterAll(() => target.close());
  conformance(() => target, { maxBodyBytes: 64 * 1024 });

  it('answers 404 not_found for a path with no receiver', async () => {
    const response = await fetch(`${target.baseUrl}/elsewhere`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
  });

  it('serves one receiver on any path', async () => {
    const { mail } = createTestReceivers();
    const handler = createFetchHandler(mail);
    const delivery = mailDelivery();
    const response = await handler(
      new Request('http://localhost/any/path', {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      }),
    );
    expect(response.status).toBe(200);
  });

  it('given a function, creates the receiver or routes on the first request only', async () => {
    const { mail, crm } = createTestReceivers();
    let single = 0;
    let routed = 0;
    const one = createFetchHandler(() => {
      single++;
      return mail;
    });
    const many = createFetchHandler(() => {
      routed++;
      return { [PATHS.mail]: mail, [PATHS.crm]: crm };
    });
    // Nothing runs at creation: a route module evaluated by `next build` without secrets still loads.
    expect([single, routed]).toEqual([0, 0]);
    for (let i = 0; i < 2; i++) {
      const delivery = mailDelivery();
      const init = { method: 'POST', body: delivery.body, headers: delivery.headers };
      expect((await one(new Request('http://localhost/any', init))).status).toBe(200);
      expect((await many(new Request(`http://localhost${PATHS.mail}`, init))).status).toBe(200);
    }
    expect([single, routed]).toEqual([1, 1]);
    expect(
      (await many(new Request('http://localhost/elsewhere', { method: 'POST', body: '{}' }))).status,
    ).toBe(404);
  });

  // Over a web-standard server on node:http that aborts request.signal when the client goes away.
  slowClientSuite(async (receiver) => ({
    ...(await listen(createServer(fetchListener(createFetchHandler(receiver))))),
    path: PATHS.mail,
  }));

  it('given a function that throws (secret unset), rejects the request instead of failing at load', async () => {
    const handler = createFetchHandler(() => {
      throw new Error('Set SVC_MAIL_WEBHOOK_SECRET.');
    });
    await expect(handler(new Request('http://localhost/', { method: 'POST', body: '{}' }))).rejects.toThrow(
      'SVC_MAIL_WEBHOOK_SECRET',
    );
  });
});

describe('fetch handler without node:crypto (web-only path)', () => {
  const processLike = process as { getBuiltinModule?: unknown };
  const original = processLike.getBuiltinModule;
  let target: ConformanceTarget;
  beforeAll(async () => {
    processLike.getBuiltinModule = undefined;
    resetNodeCryptoCache();
    target = await start();
  });
  afterAll(async () => {
    processLike.getBuiltinModule = original;
    resetNodeCryptoCache();
    await target.close();
  });

  it('really has no node:crypto', () => {
    expect(getNodeCrypto()).toBeNull();
  });
  conformance(() => target, { maxBodyBytes: 64 * 1024 });
});
