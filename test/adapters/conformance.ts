import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { crmDelivery, type Delivery, mailDelivery } from './support/deliveries.js';

/** A running server with the mail and crm receivers mounted, as the conformance suite drives it. */
export interface ConformanceTarget {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  paths: { mail: string; crm: string };
  /** How many times a handler ran for `deliveryId` (in-process count or stdout lines). */
  handled(deliveryId: string): number;
  close(): Promise<void>;
}

export interface ConformanceOptions {
  /** The mail receiver's (or the framework parser's, if lower) body limit. */
  maxBodyBytes: number;
  /**
   * A framework body parser in front of the adapter: `raw` (express.raw) answers oversized bodies
   * itself (413 with its own body, after draining the upload); `json` (express.json with verify)
   * also answers signed non-JSON itself (400).
   */
  parserInFront?: 'raw' | 'json';
  /**
   * Attempts for the streamed-oversize test when the framework's own server owns the connection
   * (Next.js): `next start` sometimes stalls a refused upload and resets it instead of sending the
   * answer, before our handler's 413 can reach the client. Default 1 (no retry).
   */
  uploadAttempts?: number;
  /**
   * Sends the declared-oversize request on a connection of its own, closed after the answer (h3 2 on
   * srvx): srvx leaves the connection of a request whose body the handler stopped reading open and
   * unread, so a client that reuses it waits until Node's keepAliveTimeout (5 s) resets it. Only the
   * sender of the refused body is affected. Default false: the next requests reuse the connection.
   */
  oversizeOnOwnConnection?: boolean;
}

/**
 * The adapter conformance suite: one real server on 127.0.0.1, real fetch, signed like the services
 * sign (node:crypto). Call inside a `describe` with a `target()` getter set up by `beforeAll`.
 */
export function conformance(target: () => ConformanceTarget, options: ConformanceOptions): void {
  const { maxBodyBytes, parserInFront, uploadAttempts = 1, oversizeOnOwnConnection = false } = options;
  const url = (service: 'mail' | 'crm') => `${target().baseUrl}${target().paths[service]}`;
  const post = (
    delivery: Delivery,
    init: { body?: string | Uint8Array; headers?: Record<string, string> } = {},
  ) =>
    fetch(url(delivery.service), {
      method: 'POST',
      body: init.body ?? delivery.body,
      headers: init.headers ?? delivery.headers,
    });
  /** Every handler line written before this call is visible after it (stdout of a child is a pipe). */
  const settle = async () => {
    const marker = mailDelivery();
    expect((await post(marker)).status).toBe(200);
    await expect.poll(() => target().handled(marker.deliveryId), { timeout: 5_000 }).toBe(1);
  };
  const errorCode = async (response: Response) =>
    ((await response.json()) as { error: { code: string } }).error.code;

  describe('conformance', () => {
    it('handles a valid mail delivery once', async () => {
      const delivery = mailDelivery();
      const response = await post(delivery);
      expect(response.status).toBe(200);
      await expect.poll(() => target().handled(delivery.deliveryId), { timeout: 5_000 }).toBe(1);
    });

    it('handles a valid crm delivery once', async () => {
      const delivery = crmDelivery();
      expect((await post(delivery)).status).toBe(200);
      await expect.poll(() => target().handled(delivery.deliveryId), { timeout: 5_000 }).toBe(1);
    });

    it('acknowledges a duplicate without running the handler again', async () => {
      const delivery = crmDelivery();
      expect((await post(delivery)).status).toBe(200);
      const again = await post(delivery);
      expect(again.status).toBe(200);
      await settle();
      expect(target().handled(delivery.deliveryId)).toBe(1);
    });

    it('refuses a bad signature and a missing one with 401', async () => {
      const delivery = mailDelivery();
      const forged = await post(delivery, {
        headers: { ...delivery.headers, 'x-svcmail-sig': `sha256=${'0'.repeat(64)}` },
      });
      expect(forged.status).toBe(401);
      expect(await errorCode(forged)).toBe('signature_mismatch');
      const { 'x-svcmail-sig': _omitted, ...unsigned } = delivery.headers;
      const missing = await post(delivery, { headers: unsigned });
      expect(missing.status).toBe(401);
      expect(await errorCode(missing)).toBe('signature_missing');
      await settle();
      expect(target().handled(delivery.deliveryId)).toBe(0);
    });

    it('refuses a signed body that is not JSON with 400', async () => {
      const delivery = mailDelivery({ body: 'not json {' });
      const response = await post(delivery);
      expect(response.status).toBe(400);
      if (parserInFront !== 'json') expect(await errorCode(response)).toBe('invalid_json');
      await settle();
      expect(target().handled(delivery.deliveryId)).toBe(0);
    });

    it('refuses a signed empty body with 400', async () => {
      const delivery = mailDelivery({ body: '' });
      const response = await post(delivery);
      expect(response.status).toBe(400);
      await settle();
      expect(target().handled(delivery.deliveryId)).toBe(0);
    });

    it('refuses a declared oversized body with 413', async () => {
      const delivery = mailDelivery();
      const body = new Uint8Array(maxBodyBytes + 1).fill(0x20);
      const response = oversizeOnOwnConnection
        ? await postClosing(url('mail'), delivery.headers, body)
        : await post(delivery, { body });
      expect(response.status).toBe(413);
      // One wording wherever the size is checked (receiver, fetch and Node readers, Fastify parser).
      if (parserInFront === undefined)
        expect(await response.json()).toEqual({
          error: {
            code: 'body_too_large',
            message: `The body exceeds this receiver's limit of ${maxBodyBytes} bytes (option maxBodyBytes).`,
            doc_url: 'https://svc.github.io/webhooks/errors.html#body_too_large',
          },
        });
    });

    it('answers 413 to a streamed oversized upload without reading all of it', {
      retry: uploadAttempts - 1,
    }, async () => {
      // node:http client here, not fetch: the server answers mid-upload and then closes the
      // connection, and undici reports that as a failed fetch when the close beats its read.
      const total = Math.max(64 * 1024 * 1024, maxBodyBytes * 32);
      const { status, body, sentAtResponse } = await streamUpload(url('mail'), mailDelivery().headers, total);
      expect(status).toBe(413);
      if (parserInFront === undefined) {
        expect(JSON.parse(body)).toEqual({
          error: {
            code: 'body_too_large',
            message: `The body exceeds this receiver's limit of ${maxBodyBytes} bytes (option maxBodyBytes).`,
            doc_url: 'https://svc.github.io/webhooks/errors.html#body_too_large',
          },
        });
        // The server answered while the upload was still going: it stopped reading.
        expect(sentAtResponse).toBeLessThan(total);
      }
    });

    it('runs the handler once for 50 concurrent copies of one delivery', async () => {
      const delivery = mailDelivery();
      const responses = await Promise.all(Array.from({ length: 50 }, () => post(delivery)));
      const statuses = responses.map((r) => r.status);
      // The first claims; the others see it completed (200) or in progress (409: the sender retries).
      expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
      expect(statuses).toContain(200);
      await settle();
      expect(target().handled(delivery.deliveryId)).toBe(1);
    });

    it('acknowledges an unknown future event without a handler', async () => {
      const mail = mailDelivery({ event: 'list_cleaned' });
      const crm = crmDelivery({ event: 'invoice.paid' });
      expect((await post(mail)).status).toBe(200);
      expect((await post(crm)).status).toBe(200);
      await settle();
      expect(target().handled(mail.deliveryId)).toBe(0);
      expect(target().handled(crm.deliveryId)).toBe(0);
    });

    it('is still serving afterwards', async () => {
      const delivery = crmDelivery();
      expect((await post(delivery)).status).toBe(200);
      await expect.poll(() => target().handled(delivery.deliveryId), { timeout: 5_000 }).toBe(1);
    });
  });
}

/** POSTs `body` with `Connection: close` on a connection of its own (no agent), answered as a Response. */
function postClosing(target: string, headers: Record<string, string>, body: Uint8Array): Promise<Response> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(target, { method: 'POST', headers, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0 })));
      res.on('error', reject);
    });
    // The server may answer and close before reading it all: a write error after that is expected.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    req.end(body);
  });
}

/** Streams `total` bytes (chunked) and reports the response and how much was written when it came. */
function streamUpload(
  target: string,
  headers: Record<string, string>,
  total: number,
): Promise<{ status: number; body: string; sentAtResponse: number }> {
  const { hostname, port, pathname } = new URL(target);
  return new Promise((resolve, reject) => {
    const { 'content-length': _none, ...rest } = headers;
    const req = request({ hostname, port, path: pathname, method: 'POST', headers: rest });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const sentAtResponse = sent;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        body += text;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, sentAtResponse }));
      res.on('error', reject);
    });
    // Writing after the server closed fails (EPIPE/ECONNRESET): expected once it has answered.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const pump = () => {
      while (sent < total && !answered) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}
