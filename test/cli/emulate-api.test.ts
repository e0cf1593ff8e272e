/**
 * The emulator's email API as its server answers it (in-process, a real server on 127.0.0.1 port 0,
 * at --speed 60): attempt records carry real durations, and every answer of the email service
 * carries the per-IP `X-RateLimit-*` headers of email-service §8, unauthenticated ones included.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorServer } from '../../src/cli/emulate/server.js';
import { createEmulatorState } from '../../src/cli/emulate/state.js';
import { createScaledClock } from '../../src/testing/clock/real-clock.js';
import { createMailApi, createMailEmitter, createVirtualClock } from '../../src/testing/index.js';

const SPEED = 60;
const APP_DELAY_MS = 300;

let emulator: Awaited<ReturnType<typeof startEmulatorServer>>;
let clock: ReturnType<typeof createScaledClock>;
let state: ReturnType<typeof createEmulatorState>;
let app: Server;
let appUrl: string;

beforeAll(async () => {
  clock = createScaledClock(SPEED);
  state = createEmulatorState(clock, SPEED);
  emulator = await startEmulatorServer(state, 0);
  // An app that answers 200 after 300 ms of real time.
  app = createServer((req, res) => {
    req.resume().on('end', () => setTimeout(() => res.writeHead(200).end(), APP_DELAY_MS));
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  state.stop();
  clock.stop();
  await emulator.close();
  app.closeAllConnections();
  await new Promise((resolve) => app.close(resolve));
});

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${emulator.address.url.replace(/\/$/, '')}${path}`, {
    ...init,
    headers: { 'X-API-Key': 'zm_live_test_admin', 'Content-Type': 'application/json', ...init.headers },
  });

describe('emulate: attempt records', () => {
  it('durationMs is real time at --speed 60, in the API and the page alike', async () => {
    const created = await api('/api/v1/webhooks', {
      method: 'POST',
      body: JSON.stringify({ url: appUrl, events: ['delivered'] }),
    });
    const { id } = (await created.json()) as { id: string };
    expect((await api(`/api/v1/webhooks/${id}/test`, { method: 'POST' })).status).toBe(200);
    const { data } = (await (await api(`/api/v1/webhooks/${id}/deliveries`)).json()) as {
      data: Array<{ durationMs: number; success: boolean }>;
    };
    expect(data).toHaveLength(1);
    expect(data[0]!.success).toBe(true);
    // Real: 300 ms and more. A wall-time bound, not the emulator's clock: the app's timer counts on
    // the runtime's cached, whole-millisecond (possibly coarse) loop time, so by performance.now() it
    // may answer up to 2 ms before 300 ms after the attempt began; 5 ms are allowed.
    expect(data[0]!.durationMs).toBeGreaterThanOrEqual(APP_DELAY_MS - 5);
    // On the emulator's clock it would be about SPEED times as long (18 000): half of that apart.
    expect(data[0]!.durationMs).toBeLessThan((APP_DELAY_MS * SPEED) / 2);
    const [shown] = state.snapshot().deliveries;
    expect(shown!.attempts[0]!.durationMs).toBe(data[0]!.durationMs);
  });
});

describe('emulate: the email service rate-limit headers', () => {
  /**
   * The reset (epoch seconds) of the window of `windowMs` around the emulator's time when it answered
   * `call`: within those of its time before and after the call. At --speed 60 an emulated minute is
   * one real second, so the answer's window may already be the next one when the call returns.
   */
  async function resetOf(windowMs: number, call: () => Promise<Response>) {
    const reset = () => (Math.floor(clock.now() / windowMs) + 1) * (windowMs / 1000);
    const before = reset();
    const response = await call();
    const after = reset();
    const value = Number(response.headers.get('x-ratelimit-reset'));
    expect(value).toBeGreaterThanOrEqual(before);
    expect(value).toBeLessThanOrEqual(after);
    return response;
  }

  it.each([
    ['GET /api/status (no authentication)', '/api/status', {}],
    ['a call without a key (401)', '/api/v1/webhooks', { 'X-API-Key': '' }],
    ['a call with an unknown key (401)', '/api/v1/webhooks', { 'X-API-Key': 'zm_live_unknown' }],
    ['an unknown route under /api (404)', '/api/v1/nothing-here', {}],
  ])('%s carries the per-IP hour window', async (_label, path, headers) => {
    const response = await resetOf(3_600_000, () => api(path, { headers }));
    expect(response.headers.get('x-ratelimit-limit')).toBe('500000');
    const remaining = Number(response.headers.get('x-ratelimit-remaining'));
    expect(remaining).toBeGreaterThan(499_000);
    expect(remaining).toBeLessThan(500_000);
  });

  it('each call counts once against the IP window', async () => {
    const first = await api('/api/status');
    const second = await api('/api/status');
    const remaining = (r: Response) => Number(r.headers.get('x-ratelimit-remaining'));
    const window = (r: Response) => r.headers.get('x-ratelimit-reset');
    // Unless a new hour began between them (every real minute at --speed 60): its count starts again.
    expect(remaining(second)).toBe(window(second) === window(first) ? remaining(first) - 1 : 499_999);
  });

  it('a call with a key carries the key window (the tighter limit): 1000 a minute', async () => {
    const response = await resetOf(60_000, () => api('/api/v1/webhooks'));
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-limit')).toBe('1000');
  });

  it('the CRM routes, the page and the control routes carry none (the CRM spec shows no rate limit)', async () => {
    for (const path of ['/v1/webhooks', '/', '/_emulator/state']) {
      const response = await api(path, { headers: { Authorization: 'Bearer crm_test_token' } });
      await response.arrayBuffer();
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });
});

describe('createMailApi: the per-IP limit', () => {
  it('answers 429 ip_rate_limit_exceeded past ipRateLimitPerHour calls from one address, with Retry-After', async () => {
    const emitter = createMailEmitter({ clock: createVirtualClock() });
    const mail = createMailApi(emitter, { ipRateLimitPerHour: 2 });
    const call = (address: string) =>
      mail.handle(new Request('https://api.svcmail.test/api/status'), { address });
    expect((await call('192.0.2.1'))!.status).toBe(200);
    expect((await call('192.0.2.1'))!.headers.get('x-ratelimit-remaining')).toBe('0');
    const refused = (await call('192.0.2.1'))!;
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('ip_rate_limit_exceeded');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another address has its own window.
    expect((await call('192.0.2.2'))!.status).toBe(200);
  });

  it('leaves paths it does not serve to other handlers unless told to answer them', async () => {
    const mail = createMailApi(createMailEmitter({ clock: createVirtualClock() }));
    const request = () => new Request('https://api.svcmail.test/api/v1/send', { method: 'POST' });
    expect(await mail.handle(request())).toBeUndefined();
    expect((await mail.handle(request(), { notFound: true }))!.status).toBe(404);
  });
});
