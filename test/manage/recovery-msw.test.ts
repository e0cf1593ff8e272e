import type { Clock } from '@svc/webhooks';
import { createMailClient, recoverFailedDeliveries } from '@svc/webhooks/manage';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// How recovery reads odd answers and handles failing calls: msw plays the email service.
const BASE = 'https://api.svcmail.test';
const HOOK = `${BASE}/api/v1/webhooks/wh_1`;
const NOW = Date.parse('2025-06-01T12:00:00.000Z');
const msw = setupServer();
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());

const clock: Clock = { now: () => NOW, sleep: async () => {} };
const client = () => createMailClient({ baseUrl: BASE, apiKey: 'zm_live_x', clock });
const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString();
const attempt = (deliveryId: string, minutesAgo: number, success = false, kind = 'scheduled') => ({
  deliveryId,
  event: 'bounced',
  attemptedAt: at(minutesAgo),
  statusCode: success ? 200 : 500,
  success,
  kind,
});

function service(attempts: unknown[], retry: (deliveryId: string) => Response | Promise<Response>) {
  const retried: string[] = [];
  msw.use(
    http.get(`${BASE}/api/v1/webhooks`, () =>
      HttpResponse.json({
        data: [{ id: 'wh_1', url: 'https://h.example.com', events: ['bounced'], status: 'active' }],
      }),
    ),
    http.get(`${HOOK}/deliveries`, () => HttpResponse.json({ data: attempts })),
    http.post(`${HOOK}/deliveries/:deliveryId/retry`, ({ params }) => {
      retried.push(String(params.deliveryId));
      return retry(String(params.deliveryId));
    }),
  );
  return retried;
}

describe('recoverFailedDeliveries reading the delivery records', () => {
  it('groups attempts by delivery: a success or a test send excludes it; young ones are pending', async () => {
    const retried = service(
      [
        attempt('ok-later', 50, true),
        attempt('ok-later', 51),
        attempt('test', 40, false, 'test'),
        attempt('three', 30),
        attempt('three', 31),
        attempt('three', 32),
        attempt('young', 1),
        attempt('old-one', 20),
      ],
      () => HttpResponse.json({ success: true, statusCode: 200 }),
    );
    const report = await recoverFailedDeliveries({ client: client(), since: '2h', now: clock.now });
    expect(retried).toEqual(['three', 'old-one']);
    expect(report.pending.map((i) => i.deliveryId)).toEqual(['young']);
    expect(report.webhooks[0]).toMatchObject({ failed: 2 });
  });

  it('follows pages; a repeated cursor rejects with response_invalid instead of looping', async () => {
    const cursors: (string | null)[] = [];
    const next: Record<string, string> = { first: 'p2', p2: 'p3', p3: 'p2' };
    msw.use(
      http.get(`${BASE}/api/v1/webhooks`, () => HttpResponse.json([{ id: 'wh_1', url: 'u', events: [] }])),
      http.get(`${HOOK}/deliveries`, ({ request }) => {
        const cursor = new URL(request.url).searchParams.get('cursor');
        cursors.push(cursor);
        return HttpResponse.json({
          data: [attempt(`d-${cursor}`, 30, false)],
          next_cursor: next[cursor ?? 'first'],
        });
      }),
      http.post(`${HOOK}/deliveries/:id/retry`, () => HttpResponse.json({ success: true })),
    );
    const error = await recoverFailedDeliveries({ client: client(), since: '2h', now: clock.now }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'WebhookError', code: 'response_invalid' });
    expect((error as Error).message).toContain('repeated the cursor of page 2 on page 3');
    expect(cursors).toEqual([null, 'p2', 'p3']);
  });

  it('an endless run of new cursors stops at maxPages (default 1000) with page_limit_exceeded', async () => {
    let calls = 0;
    msw.use(
      http.get(`${BASE}/api/v1/webhooks`, () => HttpResponse.json([{ id: 'wh_1', url: 'u', events: [] }])),
      http.get(`${HOOK}/deliveries`, () => {
        calls++;
        // A safety net for the test itself: past 5000 pages the service fails.
        if (calls > 5_000) return HttpResponse.json({ error: { code: 'enough' } }, { status: 500 });
        return HttpResponse.json({ data: [attempt(`d-${calls}`, 30)], next_cursor: `c${calls}` });
      }),
    );
    const limited = await recoverFailedDeliveries({
      client: client(),
      since: '2h',
      now: clock.now,
      maxPages: 5,
    }).catch((e: unknown) => e);
    expect(limited).toMatchObject({ name: 'WebhookError', code: 'page_limit_exceeded' });
    expect((limited as Error).message).toContain('more than 5 pages');
    expect(calls).toBe(5);
    calls = 0;
    const byDefault = await recoverFailedDeliveries({ client: client(), since: '2h', now: clock.now }).catch(
      (e: unknown) => e,
    );
    expect(byDefault).toMatchObject({ code: 'page_limit_exceeded' });
    expect(calls).toBe(1_000);
  });

  it('pages larger than asked and cursors too long are bounded as well', async () => {
    const many = Array.from({ length: 201 }, (_, i) => attempt(`d-${i}`, 30));
    msw.use(
      http.get(`${BASE}/api/v1/webhooks`, () => HttpResponse.json([{ id: 'wh_1', url: 'u', events: [] }])),
      // The service ignores limit=100 and answers 201 records at once.
      http.get(`${HOOK}/deliveries`, () => HttpResponse.json({ data: many, next_cursor: null })),
    );
    const records = await recoverFailedDeliveries({
      client: client(),
      since: '2h',
      now: clock.now,
      maxPages: 2,
      dryRun: true,
    }).catch((e: unknown) => e);
    expect(records).toMatchObject({ code: 'page_limit_exceeded' });
    expect((records as Error).message).toContain('more than 200 delivery records');
    // Within the bound, the same answer is fine.
    const fine = await recoverFailedDeliveries({
      client: client(),
      since: '2h',
      now: clock.now,
      dryRun: true,
    });
    expect(fine.skipped).toHaveLength(201);

    msw.use(
      http.get(`${HOOK}/deliveries`, () =>
        HttpResponse.json({ data: [attempt('a', 30)], next_cursor: 'x'.repeat(4_097) }),
      ),
    );
    const long = await recoverFailedDeliveries({ client: client(), since: '2h', now: clock.now }).catch(
      (e: unknown) => e,
    );
    expect(long).toMatchObject({ code: 'response_invalid' });
    expect((long as Error).message).toContain('cursor longer than 4096 characters');
  });
});

describe('recoverFailedDeliveries when calls fail', () => {
  it('an accepted retry without outcome is unconfirmed; a vanished record is not recoverable; the run goes on', async () => {
    const retried = service([attempt('a', 30), attempt('b', 20), attempt('c', 10)], (id) =>
      id === 'a'
        ? new HttpResponse(null, { status: 202 })
        : id === 'b'
          ? HttpResponse.json({ error: { code: 'delivery_not_found', message: 'gone' } }, { status: 404 })
          : HttpResponse.json({ success: false, statusCode: 502, error: 'HTTP 502' }),
    );
    const report = await recoverFailedDeliveries({ client: client(), since: '1h', now: clock.now });
    expect(retried).toEqual(['a', 'b', 'c']);
    expect(report.unconfirmed).toMatchObject([{ deliveryId: 'a' }]);
    expect(report.notRecoverable).toMatchObject([{ deliveryId: 'b', code: 'not_found' }]);
    expect(report.stillFailing).toMatchObject([{ deliveryId: 'c', statusCode: 502, reason: 'HTTP 502' }]);
    expect(report.retried.map((i) => i.deliveryId)).toEqual(['a', 'c']);
  });

  it('a rate limit beyond the cap stops the run: the rest is skipped and the report says why', async () => {
    const retried = service([attempt('a', 30), attempt('b', 20), attempt('c', 10)], (id) =>
      id === 'a'
        ? HttpResponse.json({ success: true })
        : HttpResponse.json(
            { error: { code: 'api_rate_limit_exceeded' } },
            { status: 429, headers: { 'X-RateLimit-Reset': String(NOW / 1000 + 3_600) } },
          ),
    );
    const report = await recoverFailedDeliveries({ client: client(), since: '1h', now: clock.now });
    expect(retried).toEqual(['a', 'b']);
    expect(report.stopped).toMatchObject({ code: 'rate_limited' });
    expect(report.succeeded.map((i) => i.deliveryId)).toEqual(['a']);
    expect(report.skipped.map((i) => [i.deliveryId, i.reason])).toEqual([
      ['b', 'the run stopped: rate_limited'],
      ['c', 'the run stopped: rate_limited'],
    ]);
  });

  it('an abort between retries returns the report so far with stopped: aborted', async () => {
    const controller = new AbortController();
    const retried = service([attempt('a', 30), attempt('b', 20)], () => HttpResponse.json({ success: true }));
    const report = await recoverFailedDeliveries({
      client: client(),
      since: '1h',
      now: clock.now,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === 'retry') controller.abort();
      },
    });
    expect(retried).toEqual(['a']);
    expect(report.stopped).toMatchObject({ code: 'aborted' });
    expect(report.skipped.map((i) => i.deliveryId)).toEqual(['b']);
  });

  it('a paused webhook with reactivate: false is reported, not retried', async () => {
    const retried: string[] = [];
    msw.use(
      http.get(`${BASE}/api/v1/webhooks`, () =>
        HttpResponse.json([{ id: 'wh_1', url: 'u', events: [], status: 'paused' }]),
      ),
      http.get(`${HOOK}/deliveries`, () => HttpResponse.json([attempt('a', 1)])),
      http.post(`${HOOK}/deliveries/:id/retry`, ({ params }) => {
        retried.push(String(params.id));
        return HttpResponse.json({ success: true });
      }),
    );
    const report = await recoverFailedDeliveries({
      client: client(),
      since: '1h',
      reactivate: false,
      now: clock.now,
    });
    expect(retried).toEqual([]);
    // Paused: the service will not retry it itself, so it is not pending even though it is young.
    expect(report.notRecoverable).toMatchObject([
      { deliveryId: 'a', reason: expect.stringContaining('paused') },
    ]);
  });

  it('a paused flag in another spelling is reactivated; a webhook deleted meanwhile is noted and the run goes on', async () => {
    const calls: string[] = [];
    msw.use(
      http.get(`${BASE}/api/v1/webhooks`, () =>
        HttpResponse.json([
          { id: 'gone', url: 'u', events: [], paused: true },
          { id: 'wh_1', url: 'u', events: [], active: false },
        ]),
      ),
      http.get(`${BASE}/api/v1/webhooks/:id/deliveries`, ({ params }) =>
        HttpResponse.json([attempt(`${String(params.id)}-d`, 30)]),
      ),
      http.patch(`${BASE}/api/v1/webhooks/:id`, ({ params }) => {
        calls.push(`PATCH ${String(params.id)}`);
        return params.id === 'gone'
          ? HttpResponse.json({ error: { code: 'webhook_not_found' } }, { status: 404 })
          : HttpResponse.json({ id: 'wh_1', url: 'u', events: [], active: true });
      }),
      http.post(`${BASE}/api/v1/webhooks/:id/deliveries/:deliveryId/retry`, ({ params }) => {
        calls.push(`retry ${String(params.deliveryId)}`);
        return HttpResponse.json({ success: true });
      }),
    );
    const report = await recoverFailedDeliveries({ client: client(), since: '1h', now: clock.now });
    expect(calls).toEqual(['PATCH gone', 'PATCH wh_1', 'retry wh_1-d']);
    expect(report.stopped).toBeNull();
    expect(report.notRecoverable).toMatchObject([{ deliveryId: 'gone-d', code: 'not_found' }]);
    expect(report.succeeded).toMatchObject([{ deliveryId: 'wh_1-d' }]);
    expect(report.webhooks.map((w) => w.reactivated)).toEqual([false, true]);
  });

  it('since must be a time or a duration', async () => {
    await expect(recoverFailedDeliveries({ client: client(), since: 'yesterday' })).rejects.toMatchObject({
      code: 'options_invalid',
    });
    // A duration or a number beyond the range of a Date is refused too, not a RangeError.
    for (const since of ['99999999999d', 9e15]) {
      await expect(recoverFailedDeliveries({ client: client(), since })).rejects.toMatchObject({
        code: 'options_invalid',
      });
    }
  });
});
