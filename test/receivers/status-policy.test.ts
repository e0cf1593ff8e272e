/**
 * The status policy of docs/receivers-status.md, row by row, for both services' receivers.
 */
import { PGlite } from '@electric-sql/pglite';
import {
  createCrmReceiver,
  createMailReceiver,
  createMemoryStore,
  type DedupStore,
  type WebhookReceiverLike,
} from '@svc/webhooks';
import { createPostgresStore } from '@svc/webhooks/postgres';
import { describe, expect, it } from 'vitest';
import {
  answered,
  CRM_SECRET,
  crmDelivery,
  type Delivered,
  type Delivery,
  deferred,
  deliver,
  MAIL_SECRET,
  mailDelivery,
  sign,
  toRequest,
} from './support.js';

type AnyReceiver = WebhookReceiverLike & {
  on(name: never, handler: (...args: never[]) => unknown): unknown;
  onUnknown(handler: (...args: never[]) => unknown): unknown;
  onError(handler: (error: unknown, info: { phase: string }) => unknown): unknown;
};

interface Harness {
  name: 'mail' | 'crm';
  secret: string;
  known: string;
  otherKnown: string;
  create(options?: Record<string, unknown>): AnyReceiver;
  delivery(event?: string, options?: Record<string, unknown>): Delivery;
  sigHeader: string;
  eventHeader: string;
}

const harnesses: Harness[] = [
  {
    name: 'mail',
    secret: MAIL_SECRET,
    known: 'delivered',
    otherKnown: 'bounced',
    create: (options = {}) =>
      createMailReceiver({ secret: MAIL_SECRET, ...options }) as unknown as AnyReceiver,
    delivery: (event = 'delivered', options = {}) => mailDelivery(event, options),
    sigHeader: 'x-svcmail-sig',
    eventHeader: 'x-svcmail-event',
  },
  {
    name: 'crm',
    secret: CRM_SECRET,
    known: 'deal.won',
    otherKnown: 'deal.lost',
    create: (options = {}) => createCrmReceiver({ secret: CRM_SECRET, ...options }) as unknown as AnyReceiver,
    delivery: (event = 'deal.won', options = {}) => crmDelivery(event, options),
    sigHeader: 'x-svc-signature',
    eventHeader: 'x-svc-event',
  },
];

function json(outcome: Delivered): unknown {
  return outcome.body === null ? null : JSON.parse(outcome.body);
}

function expectError(outcome: Delivered, status: number, code: string): void {
  expect(outcome.status).toBe(status);
  expect(outcome.code).toBe(code);
  expect(json(outcome)).toEqual({
    error: {
      code,
      message: expect.any(String),
      doc_url: `https://svc.github.io/webhooks/errors.html#${code}`,
    },
  });
}

/** A real Postgres store whose database is closed: every call fails. */
async function unreachableStore(): Promise<DedupStore> {
  const db = await PGlite.create();
  await db.close();
  return createPostgresStore({ client: db });
}

describe.each(harnesses)('$name receiver status policy', (h) => {
  it('processed -> 200 {"ok":true} after running the handler once', async () => {
    const receiver = h.create();
    const seen: string[] = [];
    receiver.on(h.known as never, ((event: { name: string }) => void seen.push(event.name)) as never);
    const outcome = await deliver(receiver, h.delivery());
    expect(outcome).toMatchObject({ status: 200, kind: 'handled', body: '{"ok":true}', event: h.known });
    expect(outcome.headers['content-type']).toBe('application/json');
    expect(seen).toEqual([h.known]);
  });

  it('known event without a handler -> 200 ignored', async () => {
    const receiver = h.create();
    receiver.on(
      h.otherKnown as never,
      (() => {
        throw new Error('must not run');
      }) as never,
    );
    const outcome = await deliver(receiver, h.delivery());
    expect(outcome).toMatchObject({ status: 200, kind: 'ignored' });
  });

  it('unknown event -> 200 ignored, or processed by onUnknown', async () => {
    const receiver = h.create();
    const first = await deliver(receiver, h.delivery('brand_new.event'));
    expect(first).toMatchObject({ status: 200, kind: 'ignored', event: 'brand_new.event' });
    const names: string[] = [];
    receiver.onUnknown(((event: { name: string; known: boolean }) => {
      expect(event.known).toBe(false);
      names.push(event.name);
    }) as never);
    const second = await deliver(receiver, h.delivery('brand_new.event'));
    expect(second).toMatchObject({ status: 200, kind: 'handled' });
    expect(names).toEqual(['brand_new.event']);
  });

  it('completed duplicate -> 200 duplicate without running the handler', async () => {
    const receiver = h.create();
    let runs = 0;
    receiver.on(h.known as never, (() => void runs++) as never);
    const delivery = h.delivery();
    expect((await deliver(receiver, delivery)).kind).toBe('handled');
    const again = await deliver(receiver, delivery);
    expect(again).toMatchObject({ status: 200, kind: 'duplicate', deliveryId: delivery.deliveryId });
    expect(runs).toBe(1);
  });

  it('same delivery in flight -> 409 with Retry-After, never 2xx', async () => {
    const receiver = h.create({ leaseMs: 20_000 });
    const gate = deferred();
    receiver.on(h.known as never, (() => gate.promise) as never);
    const delivery = h.delivery();
    const first = deliver(receiver, delivery);
    const second = await deliver(receiver, delivery);
    expectError(second, 409, 'delivery_in_progress');
    expect(second.code).toBe('delivery_in_progress');
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(second.headers['retry-after'])).toBeLessThanOrEqual(20);
    gate.resolve();
    expect((await first).status).toBe(200);
  });

  it('bad, missing or malformed signature -> 401', async () => {
    const receiver = h.create();
    const delivery = h.delivery();
    const forged = {
      ...delivery,
      headers: { ...delivery.headers, [h.sigHeader]: sign(delivery.body, 'not-the-secret') },
    };
    expectError(await deliver(receiver, forged), 401, 'signature_mismatch');
    const { [h.sigHeader]: _dropped, ...unsigned } = delivery.headers;
    expectError(await deliver(receiver, { ...delivery, headers: unsigned }), 401, 'signature_missing');
    const malformed = { ...delivery, headers: { ...delivery.headers, [h.sigHeader]: 'md5=abc' } };
    expectError(await deliver(receiver, malformed), 401, 'signature_malformed');
    const tampered = {
      ...delivery,
      body: new TextEncoder().encode(new TextDecoder().decode(delivery.body).replace('1', '2')),
    };
    expectError(await deliver(receiver, tampered), 401, 'signature_mismatch');
  });

  it('malformed JSON -> 400 invalid_json', async () => {
    const receiver = h.create();
    expectError(await deliver(receiver, h.delivery(h.known, { rawBody: '{"event":' })), 400, 'invalid_json');
  });

  it('wrong shape -> 400 invalid_payload', async () => {
    const receiver = h.create();
    const delivery =
      h.name === 'mail'
        ? h.delivery('delivered', { payload: { event: 'delivered', client_id: 7 } })
        : h.delivery('deal.won', { data: { deal_id: 'd_1', title: 'x', value: 'lots' } });
    expectError(await deliver(receiver, delivery), 400, 'invalid_payload');
  });

  it('header/body mismatch -> 400', async () => {
    const receiver = h.create();
    const delivery = h.delivery();
    const mismatch = { ...delivery, headers: { ...delivery.headers, [h.eventHeader]: h.otherKnown } };
    expectError(await deliver(receiver, mismatch), 400, 'event_mismatch');
    if (h.name === 'crm') {
      const idMismatch = crmDelivery('deal.won', {
        headerDeliveryId: '00000000-0000-4000-8000-000000000000',
      });
      expectError(await deliver(receiver, idMismatch), 400, 'delivery_id_mismatch');
    } else {
      const { 'x-svcmail-id': _id, ...noId } = delivery.headers;
      expectError(await deliver(receiver, { ...delivery, headers: noId }), 400, 'delivery_id_missing');
    }
  });

  it('body over the limit -> 413 (receive, declared length, streamed body)', async () => {
    const receiver = h.create({ maxBodyBytes: 64 });
    const delivery = h.delivery();
    expect(delivery.body.byteLength).toBeGreaterThan(64);
    expectError(await deliver(receiver, delivery), 413, 'body_too_large');
    const declared = await receiver.handle(toRequest(delivery));
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { code: string } }).error.code).toBe('body_too_large');

    // No Content-Length: a stream that never ends; the receiver must stop reading past the limit.
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(16));
      },
      cancel() {
        cancelled = true;
      },
    });
    const streamed = await receiver.handle(
      new Request('http://127.0.0.1/', {
        method: 'POST',
        body: endless,
        headers: delivery.headers,
        duplex: 'half',
      } as RequestInit),
    );
    expect(streamed.status).toBe(413);
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(10);
  });

  it('handler threw -> 500, claim released, the retry runs it again', async () => {
    const receiver = h.create();
    const errors: Array<{ phase: string; error: unknown }> = [];
    receiver.onError((error, info) => void errors.push({ phase: info.phase, error }));
    let attempts = 0;
    receiver.on(
      h.known as never,
      (() => {
        attempts++;
        if (attempts === 1) throw new Error(`db password hunter2 rejected for ${h.secret}`);
      }) as never,
    );
    const delivery = h.delivery();
    const first = await deliver(receiver, delivery);
    expectError(first, 500, 'handler_failed');
    expect(first.kind).toBe('failed');
    // The handler's text never reaches the sender; it goes to onError.
    expect(first.body).not.toContain('hunter2');
    expect(first.body).not.toContain(h.secret);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.phase).toBe('handler');
    expect(String(errors[0]?.error)).toContain('hunter2');
    const retry = await deliver(receiver, delivery);
    expect(retry).toMatchObject({ status: 200, kind: 'handled' });
    expect(attempts).toBe(2);
  });

  it('handler timed out -> 503 + Retry-After, signal aborted, claim kept until it settles', async () => {
    const receiver = h.create({ timeoutMs: 50, leaseMs: 60_000 });
    const gate = deferred();
    let aborted: unknown;
    let runs = 0;
    receiver.on(
      h.known as never,
      ((_event: unknown, context: { signal: AbortSignal }) => {
        runs++;
        context.signal.addEventListener('abort', () => {
          aborted = context.signal.reason;
        });
        return gate.promise;
      }) as never,
    );
    const delivery = h.delivery();
    const first = await deliver(receiver, delivery);
    expectError(first, 503, 'handler_timeout');
    expect(first.headers['retry-after']).toBeDefined();
    expect((aborted as { code?: string }).code).toBe('handler_timeout');
    // Still running: a retry must not run it a second time concurrently.
    expectError(await deliver(receiver, delivery), 409, 'delivery_in_progress');
    gate.resolve();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // It finished after the sender gave up: the next retry is a completed duplicate.
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(runs).toBe(1);
  });

  it('a timed-out handler that later throws releases its claim: the retry runs it', async () => {
    const receiver = h.create({ timeoutMs: 30 });
    const gate = deferred();
    let runs = 0;
    receiver.on(h.known as never, (() => (++runs === 1 ? gate.promise : undefined)) as never);
    const delivery = h.delivery();
    expect((await deliver(receiver, delivery)).status).toBe(503);
    gate.reject(new Error('late failure'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'handled' });
    expect(runs).toBe(2);
  });

  // PGlite boots a whole PostgreSQL in WebAssembly first: seconds, more on a loaded machine. The
  // bound is for a hang only; nothing here is timed.
  it('dedup store unreachable -> 503, fail closed: no handler runs', { timeout: 120_000 }, async () => {
    const receiver = h.create({ dedup: await unreachableStore() });
    const phases: string[] = [];
    receiver.onError((_error, info) => void phases.push(info.phase));
    let runs = 0;
    receiver.on(h.known as never, (() => void runs++) as never);
    const outcome = await deliver(receiver, h.delivery());
    expectError(outcome, 503, 'store_unavailable');
    expect(outcome.code).toBe('store_unavailable');
    expect(outcome.headers['retry-after']).toBeDefined();
    expect(runs).toBe(0);
    expect(phases).toEqual(['claim']);
  });

  it('dedup store that does not answer -> 503 after storeTimeoutMs; a late claim is released', async () => {
    const inner = createMemoryStore();
    const late = deferred();
    const slow: DedupStore = {
      claim: async (key, options) => {
        await late.promise;
        return inner.claim(key, options);
      },
      complete: (key, token, options) => inner.complete(key, token, options),
      release: (key, token) => inner.release(key, token),
    };
    const receiver = h.create({ dedup: slow, storeTimeoutMs: 30 });
    let runs = 0;
    receiver.on(h.known as never, (() => void runs++) as never);
    const delivery = h.delivery();
    expectError(await deliver(receiver, delivery), 503, 'store_unavailable');
    late.resolve();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // The late claim was given back, so the next attempt is not stuck behind it (409).
    const key = `${h.name}:delivery:${delivery.deliveryId}`;
    const again = await inner.claim(key, { leaseMs: 1000 });
    expect(again.status).toBe('claimed');
    expect(runs).toBe(0);
  });

  it('complete failing after a successful handler -> still 200, reported to onError', async () => {
    const inner = createMemoryStore();
    const flaky: DedupStore = {
      claim: (key, options) => inner.claim(key, options),
      complete: async () => {
        throw new Error('connection reset');
      },
      release: (key, token) => inner.release(key, token),
    };
    const receiver = h.create({ dedup: flaky });
    const phases: string[] = [];
    receiver.onError((_error, info) => void phases.push(info.phase));
    receiver.on(h.known as never, (() => {}) as never);
    expect(await deliver(receiver, h.delivery())).toMatchObject({ status: 200, kind: 'handled' });
    expect(phases).toEqual(['complete']);
  });

  it('wrong method -> 405 with Allow: POST (receive and handle)', async () => {
    const receiver = h.create();
    const outcome = await deliver(receiver, h.delivery(), 'GET');
    expectError(outcome, 405, 'method_not_allowed');
    expect(outcome.headers.allow).toBe('POST');
    const response = await receiver.handle(new Request('http://127.0.0.1/', { method: 'PUT', body: 'x' }));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    // Lowercase method names from hand-written servers are still POST.
    expect((await deliver(receiver, h.delivery(), 'post')).status).toBe(200);
  });

  it('a parsed object instead of raw bytes -> 500 body_not_raw, reported to onError', async () => {
    const receiver = h.create();
    const phases: string[] = [];
    receiver.onError((_error, info) => void phases.push(info.phase));
    const delivery = h.delivery();
    const outcome = answered(
      await receiver.receive({ body: { event: h.known } as never, headers: delivery.headers }),
    );
    expectError(outcome, 500, 'body_not_raw');
    expect(phases).toEqual(['internal']);
    // A Buffer or a string is accepted as the raw bytes.
    const text = new TextDecoder().decode(delivery.body);
    expect(
      answered(await receiver.receive({ body: Buffer.from(text), headers: delivery.headers })).status,
    ).toBe(200);
  });

  it('handle(Request) end to end: 200 with JSON, then duplicate', async () => {
    const receiver = h.create();
    receiver.on(h.known as never, (() => {}) as never);
    const delivery = h.delivery();
    const response = await receiver.handle(toRequest(delivery));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ ok: true });
    const again = await receiver.handle(toRequest(delivery));
    expect(await again.json()).toEqual({ ok: true, result: 'duplicate' });
  });

  it('a body reader’s refusal becomes the verdict: a failure for the route, a refusal for the request', async () => {
    const { WebhookError } = await import('@svc/webhooks');
    const receiver = h.create();
    const refuse = async (error: Error) =>
      answered(await receiver.receive({ body: () => Promise.reject(error), headers: {} }));
    const outcome = await refuse(
      new WebhookError('raw_body_unavailable', 'The body was parsed before the receiver.'),
    );
    expectError(outcome, 500, 'raw_body_unavailable');
    expect(outcome.kind).toBe('failed');
    const unreadable = await refuse(new WebhookError('body_unreadable', 'x'));
    expectError(unreadable, 400, 'body_unreadable');
    expect(unreadable.kind).toBe('refused');
  });

  it('never answers 2xx for an error nor any 3xx', async () => {
    const receiver = h.create({ maxBodyBytes: 4096 });
    receiver.on(
      h.known as never,
      (() => {
        throw new Error('x');
      }) as never,
    );
    const delivery = h.delivery();
    const variants: Delivery[] = [
      delivery,
      { ...delivery, headers: {} },
      { ...delivery, body: new Uint8Array(5000) },
      h.delivery(h.known, { rawBody: 'null' }),
      h.delivery(h.known, { rawBody: '' }),
      h.delivery(h.known, { rawBody: '[]' }),
    ];
    for (const variant of variants) {
      const outcome = await deliver(receiver, variant);
      expect(outcome.status).toBeGreaterThanOrEqual(400);
      expect(outcome.status).toBeLessThan(600);
    }
  });
});
