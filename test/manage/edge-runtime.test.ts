// @vitest-environment edge-runtime

import { createMailClient, recoverFailedDeliveries } from '@svc/webhooks/manage';
import { describe, expect, it } from 'vitest';
import { createMailApi, MAIL_TEST_API_KEY } from '../../src/testing/api/mail-api.js';
import { createVirtualClock } from '../../src/testing/clock/virtual-clock.js';
import { createMailEmitter } from '../../src/testing/emitter/mail-emitter.js';

// The clients use fetch, AbortController and timers only: they run where there is no node: module.
// The emulated API answers in-process through the client's `fetch` option.
describe('@svc/webhooks/manage in the edge runtime', () => {
  it('really runs in the edge runtime', () => {
    expect(typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime).toBe('string');
  });

  it('manages webhooks, creates and revokes a key, and recovers a failed delivery', async () => {
    const clock = createVirtualClock({ start: Date.parse('2025-06-01T00:00:00.000Z') });
    let healthy = false;
    const emitter = createMailEmitter({
      clock,
      handler: () => new Response(null, { status: healthy ? 200 : 500 }),
    });
    const api = createMailApi(emitter);
    const fetchApi = async (input: string | URL | Request, init?: RequestInit) =>
      (await api.handle(new Request(input, init))) ?? new Response(null, { status: 404 });
    const mail = createMailClient({
      baseUrl: api.baseUrl,
      apiKey: MAIL_TEST_API_KEY,
      fetch: fetchApi,
      clock: { now: clock.now, sleep: (ms) => clock.advance(ms) },
    });

    const hook = await mail.createWebhook({ url: 'https://hooks.example.com/mail', events: ['bounced'] });
    const key = await mail.createApiKey({ scopes: ['read'] });
    const reader = createMailClient({ baseUrl: api.baseUrl, apiKey: key.value!, fetch: fetchApi });
    expect(await reader.me()).toMatchObject({ scopes: ['read'] });
    await mail.revokeApiKey(key.id);
    await expect(reader.me()).rejects.toMatchObject({ code: 'unauthorized' });

    const [delivery] = await emitter.emit('bounced');
    await clock.runAll();
    healthy = true;
    const report = await recoverFailedDeliveries({ client: mail, since: '1h', now: clock.now });
    expect(report.succeeded.map((i) => i.deliveryId)).toEqual([delivery!.id]);
    expect(report.webhooks[0]!.webhookId).toBe(hook.id);
  });
});
