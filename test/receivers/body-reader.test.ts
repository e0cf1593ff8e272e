/**
 * `ReceiveInput.body` as a reader: the receiver checks the method first, calls the reader with its own
 * limits, and answers and logs every refusal itself (adapters translate only).
 */
import { createMailReceiver, type LogEntry, WebhookError } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import type { BodyLimits } from '../../src/core/receiver-types.js';
import { answered, MAIL_SECRET, mailDelivery } from './support.js';

function receiverWithLog(options: { maxBodyBytes?: number; bodyTimeoutMs?: number } = {}) {
  const entries: LogEntry[] = [];
  const receiver = createMailReceiver({
    secret: MAIL_SECRET,
    logger: (entry) => entries.push(entry),
    ...options,
  });
  let runs = 0;
  receiver.on('delivered', () => {
    runs++;
  });
  return { receiver, entries, runs: () => runs };
}

describe('ReceiveInput.body as a reader', () => {
  it('is called with the receiver limits, and its bytes are verified and handled', async () => {
    const { receiver, runs } = receiverWithLog({ maxBodyBytes: 4096, bodyTimeoutMs: 1234 });
    const delivery = mailDelivery();
    const seen: BodyLimits[] = [];
    const outcome = answered(
      await receiver.receive({
        body: async (limits) => {
          seen.push(limits);
          return delivery.body;
        },
        headers: delivery.headers,
        method: 'POST',
      }),
    );
    expect(outcome.status).toBe(200);
    expect(runs()).toBe(1);
    expect(seen).toEqual([{ maxBodyBytes: 4096, bodyTimeoutMs: 1234 }]);
  });

  it('is not called for a method other than POST (405 first)', async () => {
    const { receiver } = receiverWithLog();
    let called = 0;
    const outcome = answered(
      await receiver.receive({
        body: async () => {
          called++;
          return new Uint8Array(0);
        },
        headers: {},
        method: 'GET',
      }),
    );
    expect(outcome.status).toBe(405);
    expect(outcome.headers.allow).toBe('POST');
    expect(called).toBe(0);
  });

  it('a refusal becomes the answer, logged with its cause (never sent)', async () => {
    const { receiver, entries, runs } = receiverWithLog();
    const outcome = answered(
      await receiver.receive({
        body: () =>
          Promise.reject(
            new WebhookError('raw_body_unavailable', 'The raw body is unavailable.', {
              cause: new Error('Mount the route before the JSON parser.'),
            }),
          ),
        headers: {},
        method: 'POST',
      }),
    );
    expect(outcome).toMatchObject({ status: 500, code: 'raw_body_unavailable', kind: 'failed' });
    expect(outcome.body).not.toContain('Mount');
    expect(runs()).toBe(0);
    const refused = entries.filter((entry) => entry.message === 'webhook request refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      level: 'error',
      fields: { code: 'raw_body_unavailable' },
    });
    expect(String(refused[0]!.fields.err)).toContain('Mount the route before the JSON parser.');
  });

  it.each([
    ['body_too_large', 413],
    ['body_timeout', 408],
    ['body_unreadable', 400],
  ] as const)('a reader rejecting with %s answers %i, logged as a warning', async (code, status) => {
    const { receiver, entries } = receiverWithLog();
    const outcome = answered(
      await receiver.receive({
        body: () => Promise.reject(new WebhookError(code, 'x')),
        headers: {},
      }),
    );
    expect(outcome).toMatchObject({ status, code, kind: 'refused' });
    expect(entries.filter((entry) => entry.message === 'webhook request refused')).toMatchObject([
      { level: 'warn', fields: { code } },
    ]);
  });

  it('a reader that throws or rejects with something else answers 500 internal_error', async () => {
    const { receiver } = receiverWithLog();
    const thrown = answered(
      await receiver.receive({
        body: () => {
          throw new Error('reader threw');
        },
        headers: {},
      }),
    );
    expect(thrown).toMatchObject({ status: 500, code: 'internal_error' });
    expect(thrown.body).not.toContain('reader threw');
    const rejected = answered(
      await receiver.receive({ body: () => Promise.reject(new Error('nope')), headers: {} }),
    );
    expect(rejected).toMatchObject({ status: 500, code: 'internal_error' });
  });

  it('bytes past maxBodyBytes from a reader get the one body_too_large wording', async () => {
    const { receiver } = receiverWithLog({ maxBodyBytes: 16 });
    const delivery = mailDelivery();
    const outcome = answered(
      await receiver.receive({ body: async () => delivery.body, headers: delivery.headers }),
    );
    expect(outcome.status).toBe(413);
    expect(JSON.parse(outcome.body!)).toEqual({
      error: {
        code: 'body_too_large',
        message: "The body exceeds this receiver's limit of 16 bytes (option maxBodyBytes).",
        doc_url: 'https://svc.github.io/webhooks/errors.html#body_too_large',
      },
    });
  });

  it('never throws, even for an input that is not one (receive resolves 500 internal_error)', async () => {
    const { receiver } = receiverWithLog();
    const outcome = answered(
      await receiver.receive({
        body: async () => new Uint8Array(0),
        headers: {},
        method: 5 as never,
      }),
    );
    expect(outcome).toMatchObject({ status: 500, code: 'internal_error' });
    await expect(receiver.receive(undefined as never).then(answered)).resolves.toMatchObject({ status: 500 });
  });
});
