import { connect, type Socket } from 'node:net';
import { createMailReceiver, type WebhookReceiverLike } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import { MAIL_SECRET, mailDelivery } from './deliveries.js';

/** What each adapter's test gives: a real server on 127.0.0.1 serving `receiver` at `path`. */
export type StartAdapter = (
  receiver: WebhookReceiverLike,
) => Promise<{ baseUrl: string; path: string; close: () => Promise<void> }>;

/** The body deadline the suite gives its receivers: short, so a slow client meets it quickly. */
const BODY_TIMEOUT_MS = 300;

/**
 * A mail receiver whose handler waits for its `signal` (the handler deadline is a minute away, so
 * only a disconnect can abort it) and records the abort reason.
 */
export function waitingReceiver() {
  const state = { started: 0, reasons: [] as unknown[] };
  const receiver = createMailReceiver({
    secret: MAIL_SECRET,
    logger: () => {},
    timeoutMs: 60_000,
    leaseMs: 120_000,
    bodyTimeoutMs: BODY_TIMEOUT_MS,
  });
  receiver.onAny(async (_event, { signal }) => {
    state.started++;
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    state.reasons.push(signal.reason);
  });
  return { receiver, state };
}

function open(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

function head(path: string, headers: Record<string, string>, length: number): string {
  const lines = Object.entries({ ...headers, host: 'localhost', 'content-length': String(length) }).map(
    ([name, value]) => `${name}: ${value}`,
  );
  return `POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * A slow-loris client: the headers at once, then the body one byte per `intervalMs` (the whole body
 * would take `body.length * intervalMs`). Stops sending when the server answers; resolves when the
 * server has closed the connection, with what it answered and how many body bytes had been sent.
 */
export async function slowLoris(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  body: string,
  intervalMs = 50,
): Promise<{ response: string; sent: number }> {
  const socket = await open(baseUrl);
  let response = '';
  let sent = 0;
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    response += text;
  });
  socket.on('error', () => {});
  socket.write(head(path, headers, Buffer.byteLength(body)));
  const timer = setInterval(() => {
    if (response !== '' || socket.destroyed || sent >= body.length) return clearInterval(timer);
    socket.write(body[sent++] ?? '');
  }, intervalMs);
  // A server that never answers nor closes fails the test here rather than hanging it.
  const giveUp = setTimeout(() => socket.destroy(), 15_000);
  await new Promise((resolve) => socket.once('close', resolve));
  clearTimeout(giveUp);
  clearInterval(timer);
  return { response, sent };
}

/**
 * A slow-loris client in the headers phase: the request line, then one header byte per `intervalMs`,
 * never finishing. Only the server's own timeouts can end it; resolves with what the server answered
 * when it closed the connection (or after 15 s, with whatever came, when it did not).
 */
export async function slowHeaders(baseUrl: string, path: string, intervalMs = 100): Promise<string> {
  const socket = await open(baseUrl);
  let response = '';
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    response += text;
  });
  socket.on('error', () => {});
  socket.write(`POST ${path} HTTP/1.1\r\nhost: localhost\r\nx-slow: `);
  const timer = setInterval(() => socket.destroyed || socket.write('a'), intervalMs);
  const giveUp = setTimeout(() => socket.destroy(), 15_000);
  await new Promise((resolve) => socket.once('close', resolve));
  clearTimeout(giveUp);
  clearInterval(timer);
  return response;
}

/** Sends a whole signed delivery, waits until `started()`, then drops the connection unanswered. */
export async function disconnectWhileHandling(
  baseUrl: string,
  path: string,
  started: () => boolean,
): Promise<void> {
  const delivery = mailDelivery();
  const socket = await open(baseUrl);
  socket.on('error', () => {});
  socket.write(head(path, delivery.headers, Buffer.byteLength(delivery.body)) + delivery.body);
  await expect.poll(started, { timeout: 5_000 }).toBe(true);
  socket.destroy();
}

/**
 * The cases every Node-side adapter must pass with clients that are slow or go away: a body trickled
 * in is answered 408 `body_timeout` long before it would have arrived, then the connection is cut;
 * a client that disconnects while the handler runs aborts the handler's `signal`.
 */
export function slowClientSuite(
  start: StartAdapter,
  options: {
    /** Checks the handler signal's abort reason; default: an `AbortError` (the Node adapters' own). */
    abortReason?: (reason: unknown) => void;
  } = {},
): void {
  const { abortReason = (reason: unknown) => expect((reason as Error).name).toBe('AbortError') } = options;
  describe('slow and vanishing clients', () => {
    it('answers a slow-loris body 408 body_timeout before it arrives, then closes the connection', async () => {
      const { receiver, state } = waitingReceiver();
      const server = await start(receiver);
      try {
        const delivery = mailDelivery();
        // 50 ms a byte: the whole body would take tens of seconds; the deadline is 300 ms.
        const { response, sent } = await slowLoris(
          server.baseUrl,
          server.path,
          delivery.headers,
          delivery.body,
        );
        expect(response).toMatch(/^HTTP\/1\.1 408 /);
        expect(response).toContain('"code":"body_timeout"');
        expect(sent).toBeLessThan(delivery.body.length);
        expect(state.started).toBe(0);
      } finally {
        await server.close();
      }
    });

    it("aborts the handler's signal when the client disconnects before the answer", async () => {
      const { receiver, state } = waitingReceiver();
      const server = await start(receiver);
      try {
        await disconnectWhileHandling(server.baseUrl, server.path, () => state.started === 1);
        await expect.poll(() => state.reasons.length, { timeout: 5_000 }).toBe(1);
        // Not the handler deadline (a minute away): the disconnect.
        abortReason(state.reasons[0]);
      } finally {
        await server.close();
      }
    });
  });
}
