import type { Clock } from '@svc/webhooks';
import { isWebhookError, type WebhookError } from '@svc/webhooks';
import { createCrmClient, createMailClient } from '@svc/webhooks/manage';
import { crmApiHandlers, mailApiHandlers } from '@svc/webhooks/testing/msw';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimitWait } from '../../src/manage/http-types.js';
import {
  CRM_TEST_TOKEN,
  createCrmEmitter,
  createMailEmitter,
  MAIL_TEST_API_KEY,
} from '../../src/testing/index.js';

// The client side is the thing under test: msw plays a service that misbehaves in every way it may.
const BASE = 'https://api.svcmail.test';
const WEBHOOKS = `${BASE}/api/v1/webhooks`;
const msw = setupServer();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());

const START = Date.parse('2025-06-01T10:00:00.000Z');

/** A clock whose sleep only records the wait and moves time (no real waiting). */
function fakeClock() {
  let now = START;
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => now,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason;
      sleeps.push(ms);
      now += ms;
    },
  };
  return { clock, sleeps };
}

const limited = (headers: Record<string, string>) =>
  HttpResponse.json(
    { error: { code: 'api_rate_limit_exceeded', message: 'More than 1000 calls this minute.' } },
    { status: 429, headers },
  );

async function failure(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWebhookError(error)) throw new Error(`expected a WebhookError, got ${String(error)}`);
  return error;
}

function client(options: Partial<Parameters<typeof createMailClient>[0]> = {}) {
  return createMailClient({ baseUrl: BASE, apiKey: 'zm_live_secretvalue', ...options });
}

describe('429: backs off honouring X-RateLimit-Reset / Retry-After, with a cap', () => {
  it('a storm of 429s with X-RateLimit-Reset (epoch seconds): waits until each reset, then succeeds', async () => {
    const { clock, sleeps } = fakeClock();
    let calls = 0;
    msw.use(
      http.get(WEBHOOKS, () => {
        calls++;
        if (calls <= 3) {
          const reset = Math.floor(clock.now() / 1000) + 10 * calls;
          return limited({
            'X-RateLimit-Limit': '5',
            'X-RateLimit-Remaining': '0',
            'X-RateLimit-Reset': String(reset),
          });
        }
        return HttpResponse.json({ data: [] });
      }),
    );
    const waits: RateLimitWait[] = [];
    const result = await client({ clock, onRateLimit: (w) => waits.push(w) }).listWebhooks();
    expect(result).toEqual([]);
    expect(calls).toBe(4);
    expect(sleeps).toEqual([10_000, 20_000, 30_000]);
    expect(waits.map((w) => [w.reason, w.retry, w.method, w.path])).toEqual([
      ['429', 1, 'GET', '/api/v1/webhooks'],
      ['429', 2, 'GET', '/api/v1/webhooks'],
      ['429', 3, 'GET', '/api/v1/webhooks'],
    ]);
  });

  it('Retry-After in seconds, as an HTTP date, and the later of both headers', async () => {
    const { clock, sleeps } = fakeClock();
    const answers = [
      limited({ 'Retry-After': '7' }),
      limited({ 'Retry-After': new Date(START + 7_000 + 12_000).toUTCString() }),
      // Reset says 5 s, Retry-After 9 s: the later one wins.
      limited({ 'Retry-After': '9', 'X-RateLimit-Reset': String((START + 19_000 + 5_000) / 1000) }),
      HttpResponse.json([]),
    ];
    msw.use(http.get(WEBHOOKS, () => answers.shift()!));
    await client({ clock }).listWebhooks();
    expect(sleeps).toEqual([7_000, 12_000, 9_000]);
  });

  it('X-RateLimit-Reset as seconds from now, and as epoch ms', async () => {
    const { clock, sleeps } = fakeClock();
    const answers = [
      limited({ 'X-RateLimit-Reset': '4' }),
      limited({ 'X-RateLimit-Reset': String(START + 4_000 + 2_500) }),
      HttpResponse.json([]),
    ];
    msw.use(http.get(WEBHOOKS, () => answers.shift()!));
    await client({ clock }).listWebhooks();
    expect(sleeps).toEqual([4_000, 2_500]);
  });

  it('a reset already past (clock skew) backs off instead of retrying at once', async () => {
    const { clock, sleeps } = fakeClock();
    let calls = 0;
    msw.use(
      http.get(WEBHOOKS, () =>
        ++calls <= 2
          ? limited({ 'X-RateLimit-Reset': String(START / 1000 - 5), 'Retry-After': '0' })
          : HttpResponse.json([]),
      ),
    );
    await client({ clock }).listWebhooks();
    expect(sleeps).toEqual([1_000, 2_000]);
  });

  it('without any header: 1 s, 2 s, 4 s', async () => {
    const { clock, sleeps } = fakeClock();
    let calls = 0;
    msw.use(http.get(WEBHOOKS, () => (++calls <= 3 ? limited({}) : HttpResponse.json([]))));
    await client({ clock }).listWebhooks();
    expect(sleeps).toEqual([1_000, 2_000, 4_000]);
  });

  it('a reset beyond maxRetryWaitMs fails at once with rate_limited and the reset time', async () => {
    const { clock, sleeps } = fakeClock();
    let calls = 0;
    const reset = START / 1000 + 120;
    msw.use(
      http.get(WEBHOOKS, () => {
        calls++;
        return limited({ 'X-RateLimit-Reset': String(reset) });
      }),
    );
    const error = await failure(client({ clock, maxRetryWaitMs: 60_000 }).listWebhooks());
    expect(error).toMatchObject({
      code: 'rate_limited',
      status: 429,
      apiCode: 'api_rate_limit_exceeded',
      resetAt: reset * 1000,
    });
    expect(error.message).toContain(new Date(reset * 1000).toISOString());
    expect(error.message).not.toContain('zm_live_secretvalue');
    expect(calls).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('an absurd or out-of-Date-range Retry-After / X-RateLimit-Reset is clamped to a day, never throws', async () => {
    const DAY = 86_400_000;
    const hostile: Record<string, string>[] = [
      { 'Retry-After': '9'.repeat(30) },
      { 'X-RateLimit-Reset': '9'.repeat(400) },
      { 'X-RateLimit-Reset': '8640000000000001' },
      { 'X-RateLimit-Reset': '999999999.5', 'Retry-After': '31536000000' },
    ];
    for (const headers of hostile) {
      const { clock, sleeps } = fakeClock();
      msw.use(http.get(WEBHOOKS, () => limited(headers)));
      const error = await failure(client({ clock }).listWebhooks());
      expect(error, JSON.stringify(headers)).toMatchObject({ code: 'rate_limited', resetAt: START + DAY });
      expect(error.message).toContain(new Date(START + DAY).toISOString());
      expect(sleeps).toEqual([]);
    }
    // Remaining: 0 with such a reset: the next call is not held for it (above maxRetryWaitMs).
    const { clock, sleeps } = fakeClock();
    msw.use(
      http.get(WEBHOOKS, () =>
        HttpResponse.json([], {
          headers: { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '9'.repeat(400) },
        }),
      ),
    );
    const mail = client({ clock });
    await mail.listWebhooks();
    await mail.listWebhooks();
    expect(sleeps).toEqual([]);
  });

  it('gives up after maxRetries with rate_limited', async () => {
    const { clock, sleeps } = fakeClock();
    let calls = 0;
    msw.use(
      http.get(WEBHOOKS, () => {
        calls++;
        return limited({ 'Retry-After': '1' });
      }),
    );
    const error = await failure(client({ clock, maxRetries: 2 }).listWebhooks());
    expect(error).toMatchObject({ code: 'rate_limited', resetAt: START + 2_000 + 1_000 });
    expect(calls).toBe(3);
    expect(sleeps).toEqual([1_000, 1_000]);
  });

  it('a POST body is sent again, unchanged, on each retry', async () => {
    const { clock } = fakeClock();
    const bodies: string[] = [];
    msw.use(
      http.post(WEBHOOKS, async ({ request }) => {
        bodies.push(await request.text());
        return bodies.length === 1
          ? limited({ 'Retry-After': '1' })
          : HttpResponse.json(
              { id: 'wh_1', url: 'https://h.example.com', events: ['opened'] },
              { status: 201 },
            );
      }),
    );
    await client({ clock }).createWebhook({ url: 'https://h.example.com', events: ['opened'] });
    expect(bodies).toEqual([bodies[0], bodies[0]]);
    expect(JSON.parse(bodies[0]!)).toEqual({ url: 'https://h.example.com', events: ['opened'] });
  });

  it('Remaining: 0 makes the next call wait for the reset instead of being refused', async () => {
    const { clock, sleeps } = fakeClock();
    let calls = 0;
    msw.use(
      http.get(WEBHOOKS, () => {
        calls++;
        const remaining = calls === 1 ? '0' : '4';
        return HttpResponse.json([], {
          headers: { 'X-RateLimit-Remaining': remaining, 'X-RateLimit-Reset': String(START / 1000 + 45) },
        });
      }),
    );
    const mail = client({ clock });
    await mail.listWebhooks();
    await mail.listWebhooks();
    await mail.listWebhooks();
    expect(sleeps).toEqual([45_000]);
    calls = 0;
    const other = fakeClock();
    const eager = client({ clock: other.clock, respectRemaining: false });
    await eager.listWebhooks();
    await eager.listWebhooks();
    expect(other.sleeps).toEqual([]);
  });
});

describe('AbortSignal and timeouts', () => {
  it('aborting an in-flight call rejects with the signal reason', async () => {
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    msw.use(
      http.get(WEBHOOKS, async () => {
        arrived();
        await new Promise(() => {});
        return HttpResponse.json([]);
      }),
    );
    const controller = new AbortController();
    const call = client().listWebhooks({ signal: controller.signal });
    await reached;
    const reason = new Error('user pressed Ctrl-C');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
  });

  it('aborting during a rate-limit wait (the real sleep) rejects at once, without another call', async () => {
    let calls = 0;
    msw.use(
      http.get(WEBHOOKS, () => {
        calls++;
        return limited({ 'Retry-After': '25' });
      }),
    );
    const controller = new AbortController();
    const call = client({ onRateLimit: () => controller.abort(new Error('stop')) }).listWebhooks({
      signal: controller.signal,
    });
    await expect(call).rejects.toThrow('stop');
    expect(calls).toBe(1);
  });

  it('an already aborted signal sends nothing', async () => {
    let calls = 0;
    msw.use(
      http.get(WEBHOOKS, () => {
        calls++;
        return HttpResponse.json([]);
      }),
    );
    const reason = new Error('too late');
    await expect(client().listWebhooks({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(calls).toBe(0);
  });

  it('a service that never answers fails with request_timeout', async () => {
    msw.use(
      http.get(WEBHOOKS, async () => {
        await new Promise(() => {});
        return HttpResponse.json([]);
      }),
    );
    const error = await failure(client({ requestTimeoutMs: 20 }).listWebhooks());
    expect(error).toMatchObject({ code: 'request_timeout', status: 504 });
    const perCall = await failure(client().listWebhooks({ requestTimeoutMs: 20 }));
    expect(perCall.code).toBe('request_timeout');
  });
});

describe('error mapping', () => {
  it.each([
    [401, { error: { code: 'unauthorized', message: 'Bad key.' } }, 'unauthorized'],
    [403, { error: { code: 'insufficient_scope', message: 'Needs admin.' } }, 'insufficient_scope'],
    [404, { error: 'webhook_not_found', message: 'No such webhook.' }, 'not_found'],
    [409, { code: 'webhook_paused' }, 'conflict'],
    [422, { error: { code: 'webhook_url_refused' } }, 'request_invalid'],
    [400, 'not json at all', 'request_invalid'],
    [500, { error: { code: 'internal_error' } }, 'api_unavailable'],
    [503, '<html>maintenance</html>', 'api_unavailable'],
  ] as const)('%i -> %s', async (status, body, code) => {
    msw.use(
      http.get(`${WEBHOOKS}/wh_1`, () =>
        typeof body === 'string' ? new HttpResponse(body, { status }) : HttpResponse.json(body, { status }),
      ),
    );
    const error = await failure(client().getWebhook('wh_1'));
    expect(error).toMatchObject({ name: 'WebhookError', code, status });
    expect(error.message).toContain(`answered ${status}`);
    expect(error.message).toContain('GET /api/v1/webhooks/wh_1');
  });

  it('keeps the service code, bounded message, never the credential', async () => {
    msw.use(
      http.get(`${WEBHOOKS}/wh_1`, () =>
        HttpResponse.json(
          { error: { code: 'insufficient_scope', message: 'x'.repeat(5_000) } },
          { status: 403 },
        ),
      ),
    );
    const error = await failure(client().getWebhook('wh_1'));
    expect(error.apiCode).toBe('insufficient_scope');
    expect(error.message.length).toBeLessThan(500);
  });

  it('a network failure is api_unavailable, a 2xx that is not JSON is response_invalid', async () => {
    msw.use(http.get(WEBHOOKS, () => HttpResponse.error()));
    expect(await failure(client().listWebhooks())).toMatchObject({ code: 'api_unavailable' });
    msw.use(http.get(WEBHOOKS, () => new HttpResponse('<html>', { status: 200 })));
    expect(await failure(client().listWebhooks())).toMatchObject({ code: 'response_invalid', status: 502 });
    msw.use(http.get(WEBHOOKS, () => HttpResponse.json({ nothing: true })));
    expect(await failure(client().listWebhooks())).toMatchObject({ code: 'response_invalid' });
  });

  it('an answer larger than maxResponseBytes is response_invalid, declared or streamed', async () => {
    const big = JSON.stringify({ data: [], padding: 'x'.repeat(4_000) });
    msw.use(
      http.get(WEBHOOKS, () => new HttpResponse(big, { headers: { 'Content-Type': 'application/json' } })),
    );
    expect(await failure(client({ maxResponseBytes: 1_024 }).listWebhooks())).toMatchObject({
      code: 'response_invalid',
    });
    msw.use(
      http.get(
        WEBHOOKS,
        () =>
          new HttpResponse(
            new ReadableStream({
              start(controller) {
                for (let i = 0; i < 8; i++) controller.enqueue(new TextEncoder().encode(' '.repeat(512)));
                controller.enqueue(new TextEncoder().encode('[]'));
                controller.close();
              },
            }),
          ),
      ),
    );
    const streamed = await failure(client({ maxResponseBytes: 1_024 }).listWebhooks());
    expect(streamed.message).toContain('more than 1024 bytes');
    expect(await client({ maxResponseBytes: 8_000 }).listWebhooks()).toEqual([]);
  });

  it('ids are path-encoded; a bad option or id is options_invalid before any call', async () => {
    const seen: string[] = [];
    msw.use(
      http.get(`${WEBHOOKS}/:id`, ({ request }) => {
        seen.push(new URL(request.url).pathname);
        return HttpResponse.json({ id: 'a/b', url: 'https://h.example.com', events: [] });
      }),
    );
    await client().getWebhook('a/b');
    expect(seen).toEqual(['/api/v1/webhooks/a%2Fb']);
    expect(() => createMailClient({ baseUrl: 'api.svcmail.test', apiKey: 'k' })).toThrow(
      expect.objectContaining({ code: 'options_invalid' }),
    );
    expect(() => createMailClient({ baseUrl: BASE })).toThrow(
      expect.objectContaining({ code: 'options_invalid' }),
    );
    expect(() => createCrmClient({ baseUrl: BASE })).toThrow(
      expect.objectContaining({ code: 'options_invalid' }),
    );
    await expect(client().getWebhook('')).rejects.toMatchObject({ code: 'options_invalid' });
  });
});

describe('lenient reading of answers the specs do not show', () => {
  it('sends X-API-Key, or a session Bearer token', async () => {
    const seen: (string | null)[] = [];
    msw.use(
      http.get(`${BASE}/api/v1/auth/me`, ({ request }) => {
        seen.push(request.headers.get('x-api-key') ?? request.headers.get('authorization'));
        return HttpResponse.json({
          authType: 'api_key',
          clientId: 'c',
          agencyId: 'a',
          role: 'api_key',
          scopes: [],
        });
      }),
    );
    await client().me();
    await createMailClient({ baseUrl: BASE, sessionToken: 'jwt.abc' }).me();
    expect(seen).toEqual(['zm_live_secretvalue', 'Bearer jwt.abc']);
  });

  it('bare arrays, other list keys, snake_case fields, extra fields kept, records without ids dropped', async () => {
    msw.use(
      http.get(WEBHOOKS, () =>
        HttpResponse.json({
          webhooks: [
            { id: 'wh_1', url: 'https://h.example.com', events: ['opened'], created_at: 'x', tier: 'gold' },
          ],
        }),
      ),
      http.get(`${WEBHOOKS}/wh_1/deliveries`, () =>
        HttpResponse.json([
          { delivery_id: 'd1', attempted_at: '2025-06-01T09:00:00.000Z', status_code: 503, region: 'eu' },
          { delivery_id: 'd2', attempted_at: '2025-06-01T09:00:01.000Z', status_code: 204 },
          { delivery_id: 'd3', attempted_at: '2025-06-01T09:00:02.000Z', success: false, status_code: 200 },
          { nothing: 'useful' },
        ]),
      ),
      http.post(`${WEBHOOKS}/wh_1/deliveries/d1/retry`, () => new HttpResponse(null, { status: 202 })),
    );
    const mail = client();
    const [hook] = await mail.listWebhooks();
    expect(hook).toMatchObject({ id: 'wh_1', createdAt: 'x', tier: 'gold' });
    const page = await mail.listDeliveries('wh_1');
    expect(page.nextCursor).toBeNull();
    expect(page.data).toMatchObject([
      { deliveryId: 'd1', success: false, statusCode: 503, region: 'eu' },
      { deliveryId: 'd2', success: true, statusCode: 204 },
      { deliveryId: 'd3', success: false, statusCode: 200 },
    ]);
    // A service that ignores the query parameters: the client filters itself.
    const failedSince = await mail.listDeliveries('wh_1', {
      since: '2025-06-01T09:00:00.500Z',
      success: false,
    });
    expect(failedSince.data.map((a) => a.deliveryId)).toEqual(['d3']);
    expect(await mail.retryDelivery('wh_1', 'd1')).toEqual({});
  });

  it('a PATCH answered without the webhook (204, or a status object) reads it back', async () => {
    const calls: string[] = [];
    const hook = { id: 'wh_1', url: 'https://h.example.com', events: ['opened'], status: 'active' };
    msw.use(
      http.patch(`${WEBHOOKS}/wh_1`, () => {
        calls.push('PATCH');
        return calls.length === 1 ? new HttpResponse(null, { status: 204 }) : HttpResponse.json({ ok: true });
      }),
      http.get(`${WEBHOOKS}/wh_1`, () => {
        calls.push('GET');
        return HttpResponse.json(hook);
      }),
    );
    expect(await client().reactivateWebhook('wh_1')).toMatchObject(hook);
    expect(await client().updateWebhook('wh_1', { description: 'x' })).toMatchObject(hook);
    expect(calls).toEqual(['PATCH', 'GET', 'PATCH', 'GET']);
    const crmCalls: string[] = [];
    msw.use(
      http.patch('https://api.svccrm.test/v1/webhooks/c1', () => {
        crmCalls.push('PATCH');
        return new HttpResponse(null, { status: 204 });
      }),
      http.get('https://api.svccrm.test/v1/webhooks/c1', () => {
        crmCalls.push('GET');
        return HttpResponse.json({ id: 'c1', url: 'https://h.example.com', events: [], active: true });
      }),
    );
    const crm = createCrmClient({ baseUrl: 'https://api.svccrm.test', token: 't' });
    expect(await crm.reactivateWebhook('c1')).toMatchObject({ id: 'c1', active: true });
    expect(crmCalls).toEqual(['PATCH', 'GET']);
  });

  it('follows next_cursor / nextCursor', async () => {
    msw.use(
      http.get(`${WEBHOOKS}/wh_1/deliveries`, ({ request }) => {
        const cursor = new URL(request.url).searchParams.get('cursor');
        return HttpResponse.json(
          cursor === null
            ? { data: [], next_cursor: 'p2' }
            : { items: [{ deliveryId: 'd', attemptedAt: '2025-06-01T09:00:00.000Z' }], nextCursor: null },
        );
      }),
    );
    const mail = client();
    const first = await mail.listDeliveries('wh_1', { limit: 10 });
    expect(first.nextCursor).toBe('p2');
    const second = await mail.listDeliveries('wh_1', { limit: 10, cursor: first.nextCursor! });
    expect(second).toMatchObject({ data: [{ deliveryId: 'd', success: false }], nextCursor: null });
  });
});

describe('the documented msw setup (docs/manage-clients.md)', () => {
  it('the clients drive the emulators through mailApiHandlers / crmApiHandlers', async () => {
    const mailEmitter = createMailEmitter({ handler: () => new Response(null, { status: 500 }) });
    const crmEmitter = createCrmEmitter();
    msw.use(...mailApiHandlers(mailEmitter), ...crmApiHandlers(crmEmitter));
    const mail = createMailClient({ baseUrl: BASE, apiKey: MAIL_TEST_API_KEY });
    const hook = await mail.createWebhook({ url: 'https://hooks.example.com/mail', events: ['bounced'] });
    expect(mailEmitter.revealSecret(hook.id)).toBe(hook.secret);
    const [delivery] = await mailEmitter.emit('bounced');
    const page = await mail.listDeliveries(hook.id, { success: false });
    expect(page.data).toMatchObject([{ deliveryId: delivery!.id, statusCode: 500, attempt: 1 }]);
    const crm = createCrmClient({ baseUrl: 'https://api.svccrm.test', token: CRM_TEST_TOKEN });
    await crm.createWebhook({ name: 'n', url: 'https://hooks.example.com/crm', events: ['deal.won'] });
    expect(await crm.listWebhooks()).toHaveLength(1);
  });
});
