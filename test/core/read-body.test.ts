import { describe, expect, it } from 'vitest';
import { readRequestBody } from '../../src/core/read-body.js';
import { WebhookError } from '../../src/shared/errors.js';

function streamOf(chunks: Uint8Array[], failAt?: number): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i === failAt) return controller.error(new Error('connection reset'));
      const chunk = chunks[i++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
}

function post(body: RequestInit['body'], headers: Record<string, string> = {}): Request {
  return new Request('http://127.0.0.1/', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
}

describe('readRequestBody', () => {
  it('returns the exact bytes, with and without Content-Length', async () => {
    const bytes = new Uint8Array([123, 34, 97, 34, 58, 49, 125, 0, 255]);
    expect(await readRequestBody(post(bytes), 100)).toEqual(bytes);
    const chunked = post(streamOf([bytes.subarray(0, 3), bytes.subarray(3)]));
    expect(chunked.headers.get('content-length')).toBeNull();
    expect(await readRequestBody(chunked, 100)).toEqual(bytes);
    expect(await readRequestBody(post(null), 100)).toEqual(new Uint8Array(0));
  });

  it('accepts a body of exactly the limit and refuses one byte more', async () => {
    expect((await readRequestBody(post(new Uint8Array(64)), 64)) as Uint8Array).toHaveLength(64);
    const over = await readRequestBody(post(streamOf([new Uint8Array(60), new Uint8Array(5)])), 64);
    expect(over).toBeInstanceOf(WebhookError);
    expect((over as WebhookError).code).toBe('body_too_large');
    expect((over as WebhookError).status).toBe(413);
  });

  it('refuses a declared Content-Length above the limit without reading', async () => {
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(new Uint8Array(8));
      },
    });
    const request = post(body, { 'content-length': '1000000' });
    const result = await readRequestBody(request, 1024);
    expect((result as WebhookError).code).toBe('body_too_large');
    expect(pulls).toBeLessThanOrEqual(1);
  });

  it('a stream that fails midway is body_unreadable (400)', async () => {
    const result = await readRequestBody(post(streamOf([new Uint8Array(4), new Uint8Array(4)], 1)), 100);
    expect((result as WebhookError).code).toBe('body_unreadable');
    expect((result as WebhookError).status).toBe(400);
  });

  it('allocates as bytes arrive, never the declared Content-Length up front', async () => {
    const declared = 1024 * 1024;
    const request = post(streamOf([new Uint8Array(10).fill(1), new Uint8Array(10).fill(2)]), {
      'content-length': String(declared),
    });
    const result = (await readRequestBody(request, declared)) as Uint8Array;
    expect(result).toEqual(new Uint8Array([...Array(10).fill(1), ...Array(10).fill(2)]));
    // The bytes live in buffers sized by what arrived, not in a 1 MiB one sliced down.
    expect(result.buffer.byteLength).toBeLessThan(declared);
  });

  it('holds no buffer of the declared size for stalled requests (200 x Content-Length 1 MiB)', async () => {
    const declared = 1024 * 1024;
    const controllers: ReadableStreamDefaultController<Uint8Array>[] = [];
    const before = process.memoryUsage().arrayBuffers;
    const reads = Array.from({ length: 200 }, () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controllers.push(controller);
          controller.enqueue(new Uint8Array(16)); // a few bytes, then nothing more
        },
      });
      return readRequestBody(post(body, { 'content-length': String(declared) }), declared, 60_000);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const held = process.memoryUsage().arrayBuffers - before;
    // Allocating the declared length would hold 200 MiB here; the margin is generous.
    expect(held).toBeLessThan(32 * 1024 * 1024);
    for (const controller of controllers) controller.error(new Error('client went away'));
    const results = await Promise.all(reads);
    expect(results.every((r) => r instanceof WebhookError && r.code === 'body_unreadable')).toBe(true);
  });

  it('answers a body that stalls past bodyTimeoutMs with body_timeout (408) and cancels it', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(4));
      },
      cancel() {
        cancelled = true;
      },
    });
    const result = await readRequestBody(post(body, { 'content-length': '100' }), 1024, 20);
    expect((result as WebhookError).code).toBe('body_timeout');
    expect((result as WebhookError).status).toBe(408);
    expect(cancelled).toBe(true);
  });
});
