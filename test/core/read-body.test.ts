import { describe, expect, it } from 'vitest';
import { WebhookError } from '../../src/core/errors.js';
import { readRequestBody } from '../../src/core/read-body.js';

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
});
