/**
 * The record of each attempt's request and answer behind the page's inspector, over real HTTP: bodies
 * cut at the cap (an endless answer is not read to its end), headers bounded, the oldest attempts
 * dropped past the limit, and an answer handed on to the emitter as it was read.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExchangeLog } from '../../src/cli/emulate/exchanges.js';

const LIMITS = { bodyChars: 100, headers: 3, headerChars: 20, attempts: 2 };
let server: Server;
let url: string;
let endlessClosed = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    if (req.url === '/endless') {
      res.writeHead(500, { 'content-type': 'text/plain' });
      const chunk = 'y'.repeat(16_384);
      const pump = () => {
        while (res.write(chunk));
      };
      res.on('drain', pump);
      res.on('close', () => {
        endlessClosed = true;
      });
      pump();
      return;
    }
    res.writeHead(401, {
      'content-type': 'application/json',
      'x-long': 'v'.repeat(500),
      'x-a': '1',
      'x-b': '2',
      'x-c': '3',
    });
    res.end('{"error":{"code":"signature_mismatch","message":"no"}}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const post = (log: ReturnType<typeof createExchangeLog>, path: string, id: string, body = '{}') =>
  log.fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'x-id': id, 'content-type': 'application/json' },
    body,
  });

describe('the exchange log', () => {
  it('keeps the request and the answer of an attempt, headers and bodies cut at their caps', async () => {
    const log = createExchangeLog(globalThis.fetch, (h) => h.get('x-id'), LIMITS);
    const response = await post(log, '/hooks', 'd1', JSON.stringify({ text: 'z'.repeat(300) }));
    expect(response.status).toBe(401);
    // The emitter reads the same answer the page shows.
    expect(await response.text()).toBe('{"error":{"code":"signature_mismatch","message":"no"}}');
    log.file('d1', 1);
    const exchange = log.get('d1', 1)!;
    expect(exchange.request.method).toBe('POST');
    expect(exchange.request.url).toBe(`${url}/hooks`);
    expect(exchange.request.body).toMatchObject({ bytes: 311, truncated: true });
    expect(exchange.request.body.text).toHaveLength(100);
    expect(exchange.response!.status).toBe(401);
    expect(exchange.response!.body).toMatchObject({ truncated: false });
    expect(exchange.response!.headers).toHaveLength(3);
    const wide = createExchangeLog(globalThis.fetch, (h) => h.get('x-id'), { ...LIMITS, headers: 64 });
    await post(wide, '/hooks', 'd1');
    wide.file('d1', 1);
    expect(wide.get('d1', 1)!.response!.headers.find(([name]) => name === 'x-long')?.[1]).toBe(
      'v'.repeat(20),
    );
  });

  it('reads an endless answer only up to the cap, then drops the connection', async () => {
    const log = createExchangeLog(globalThis.fetch, (h) => h.get('x-id'), LIMITS);
    const response = await post(log, '/endless', 'd2');
    expect((await response.text()).length).toBe(100);
    log.file('d2', 1);
    expect(log.get('d2', 1)!.response!.body).toMatchObject({ truncated: true });
    await expect.poll(() => endlessClosed).toBe(true);
  });

  it('records a refused connection with its error, and keeps only the most recent attempts', async () => {
    const log = createExchangeLog(globalThis.fetch, (h) => h.get('x-id'), LIMITS);
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const closed = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise((r) => probe.close(r));
    await expect(
      log.fetch(closed, { method: 'POST', headers: { 'x-id': 'd3' }, body: '{}' }),
    ).rejects.toThrow();
    log.file('d3', 1);
    expect(log.get('d3', 1)).toMatchObject({ response: null, error: 'fetch failed' });
    for (const id of ['d4', 'd5']) {
      await post(log, '/hooks', id);
      log.file(id, 1);
    }
    expect(log.get('d3', 1)).toBeUndefined();
    expect(log.get('d4', 1)).toBeDefined();
    expect(log.get('d5', 1)).toBeDefined();
  });

  it('drops exchanges whose attempt is never reported past the same limit', async () => {
    const log = createExchangeLog(globalThis.fetch, (h) => h.get('x-id'), LIMITS);
    for (const id of ['u1', 'u2', 'u3']) await post(log, '/hooks', id);
    log.file('u1', 1);
    log.file('u3', 1);
    expect(log.get('u1', 1)).toBeUndefined();
    expect(log.get('u3', 1)).toBeDefined();
  });
});
