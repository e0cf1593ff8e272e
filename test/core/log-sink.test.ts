/**
 * The `logger` option with real loggers: the console by default (warnings and errors only), `false`,
 * pino, winston, bunyan and `console` passed as they are. A handler's thrown error reaches each with
 * its stack, under the key the logger's own error handling reads; no line holds the secret or any
 * byte of a body (a body that fails to parse included: JSON's own message quotes it).
 */
import { Writable } from 'node:stream';
import { createMailReceiver, isWebhookError, type Logger, type MailReceiverOptions } from '@svc/webhooks';
import bunyan from 'bunyan';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import winston from 'winston';
import { toLogSink } from '../../src/core/log-sink.js';
import { WebhookError } from '../../src/shared/errors.js';
import { deliver, MAIL_SECRET, mailDelivery, sign } from '../receivers/support.js';

// In every body below; a log line holding it holds part of a body.
const BODY_MARK = 'BODYMARK';

/** A handler that throws an error with a cause; the other scenarios each make one more entry. */
async function scenarios(options: Partial<MailReceiverOptions>): Promise<void> {
  const receiver = createMailReceiver({ secret: MAIL_SECRET, ...options })
    .on('bounced', () => {
      throw new Error('db down', { cause: new Error('connection refused') });
    })
    .on('delivered', () => {});
  const payload = {
    event: 'bounced',
    client_id: 'client_1',
    message_id: 'msg_1',
    to: `${BODY_MARK}@example.com`,
    provider: 'gmail',
    timestamp: '2024-05-01T10:00:00.123Z',
  };
  expect((await deliver(receiver, mailDelivery('bounced', { payload }))).status).toBe(500);
  // A body that is not JSON: V8's message quotes it ("Unexpected token 'B', "BODYMARK"… is not valid JSON").
  const text = `${BODY_MARK} is not json`;
  expect((await deliver(receiver, mailDelivery('bounced', { rawBody: text }))).code).toBe('invalid_json');
  const forged = mailDelivery('delivered', { payload: { ...payload, event: 'delivered' } });
  forged.headers['x-svcmail-sig'] = sign(forged.body, 'whsec_not_the_secret_0000');
  expect((await deliver(receiver, forged)).code).toBe('signature_mismatch');
  // Handled: debug entries only.
  expect((await deliver(receiver, mailDelivery('delivered'))).status).toBe(200);
}

function lines(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

function expectNoSecretOrBody(text: string): void {
  expect(text).not.toContain(MAIL_SECRET);
  expect(text).not.toContain(BODY_MARK);
  expect(text).not.toContain('sha256=');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('without a logger', () => {
  it('warnings and errors go to the console, one line each with the delivery fields; the stack follows', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    await scenarios({});
    expect(info).not.toHaveBeenCalled();
    expect(debug).not.toHaveBeenCalled();
    expect(log).not.toHaveBeenCalled();
    const thrown = error.mock.calls.find(([line]) => String(line).includes('webhook handler threw'));
    expect(thrown).toBeDefined();
    const [line, err] = thrown!;
    expect(line).toMatch(
      /^@svc\/webhooks ERROR webhook handler threw service=mail deliveryId=dlv_\S+ event=bounced dedupKey=mail:delivery:dlv_\S+ phase=handler$/,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('db down');
    expect((err as Error).stack).toContain('log-sink.test.ts');
    expect(warn.mock.calls.map(([first]) => String(first))).toEqual([
      expect.stringMatching(/^@svc\/webhooks WARN verified webhook failed validation .*code=invalid_json/),
      expect.stringMatching(
        /^@svc\/webhooks WARN webhook signature rejected service=mail code=signature_mismatch/,
      ),
    ]);
    // The refusal's own message goes along, without the JSON error that quotes the body.
    const invalid = warn.mock.calls[0]![1] as Error;
    expect(isWebhookError(invalid) && invalid.code).toBe('invalid_json');
    expect(invalid.cause).toBeUndefined();
    expectNoSecretOrBody(
      [...error.mock.calls, ...warn.mock.calls]
        .flat()
        .map((value) => (value instanceof Error ? `${value.stack} ${value.message}` : String(value)))
        .join('\n'),
    );
  });

  it('the same error on many deliveries prints its stack once, though each line names its own job', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const log = toLogSink('createMailReceiver', undefined)!;
    const inProgress = () =>
      new WebhookError(
        'delivery_in_progress',
        'Another attempt of this delivery is being processed; retry later.',
      );
    for (const id of ['dlv_1', 'dlv_2', 'dlv_3']) {
      log({
        level: 'error',
        message: `BullMQ job mail%3Adelivery%3A${id} attempt 1 not run (delivery_in_progress); it runs again`,
        fields: { deliveryId: id, err: inProgress() },
      });
    }
    const calls = error.mock.calls;
    expect(calls).toHaveLength(3);
    expect(calls[0]).toHaveLength(2);
    expect(calls.slice(1).map((call) => call.length)).toEqual([1, 1]);
    expect(String(calls[2]![0])).toMatch(
      /job mail%3Adelivery%3Adlv_3 .*deliveryId=dlv_3 err="WebhookError: Another attempt of this delivery is being processed; retry later\." \(stack printed the first time\)$/,
    );
    // The same text under another code is another kind of failure: its own first stack.
    log({
      level: 'error',
      message: 'BullMQ job mail%3Adelivery%3Adlv_4 attempt 1 not run (store_unavailable); it runs again',
      fields: {
        err: new WebhookError(
          'store_unavailable',
          'Another attempt of this delivery is being processed; retry later.',
        ),
      },
    });
    expect(calls.at(-1)).toHaveLength(2);
  });

  it('a failure that repeats prints its stack once, then one line per attempt naming the error', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const receiver = createMailReceiver({ secret: MAIL_SECRET }).on('opened', () => {
      throw new Error('planned outage');
    });
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await deliver(receiver, mailDelivery('opened'))).status).toBe(500);
    }
    const calls = error.mock.calls.filter(([line]) => String(line).includes('webhook handler threw'));
    expect(calls).toHaveLength(3);
    expect((calls[0]![1] as Error).message).toBe('planned outage');
    for (const call of calls.slice(1)) {
      expect(call).toHaveLength(1);
      expect(call[0]).toMatch(/ err="Error: planned outage" \(stack printed the first time\)$/);
    }
    // Another kind of failure has its own first stack.
    const other = createMailReceiver({ secret: MAIL_SECRET }).on('opened', () => {
      throw new Error('another outage');
    });
    await deliver(other, mailDelivery('opened'));
    expect((error.mock.calls.at(-1)![1] as Error).message).toBe('another outage');
  });

  it('a handler log.warn reaches the console with the delivery fields; log.info does not', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const receiver = createMailReceiver({ secret: MAIL_SECRET }).on('delivered', (_event, { log }) => {
      log.info('not shown');
      log.warn('slow downstream', { ms: 1200 });
    });
    const delivery = mailDelivery('delivered');
    await deliver(receiver, delivery);
    expect(info).not.toHaveBeenCalled();
    expect(warn.mock.calls).toEqual([
      [
        `@svc/webhooks WARN slow downstream service=mail deliveryId=${delivery.deliveryId} event=delivered dedupKey=mail:delivery:${delivery.deliveryId} ms=1200`,
      ],
    ]);
  });

  it('quotes values that are not plain, so a header value cannot write escape sequences to a terminal', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const receiver = createMailReceiver({ secret: MAIL_SECRET });
    const delivery = mailDelivery('delivered', { deliveryId: 'id \u001b[31mred' });
    delivery.headers['x-svcmail-sig'] = 'sha256=00';
    await deliver(receiver, delivery);
    expect(warn.mock.calls[0]![0]).toContain('deliveryId="id \\u001b[31mred"');
  });

  it('escapes C1 controls (U+009B is a CSI), DEL, U+2028/U+2029 and bidi overrides too, which JSON leaves raw', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const receiver = createMailReceiver({ secret: MAIL_SECRET });
    const delivery = mailDelivery('delivered', {
      deliveryId: 'id\u009b31m\u0085next\u2028line\u2029para\u007f\u202eevil',
    });
    delivery.headers['x-svcmail-sig'] = 'sha256=00';
    await deliver(receiver, delivery);
    const line = String(warn.mock.calls[0]![0]);
    expect(line).toContain('deliveryId="id\\u009b31m\\u0085next\\u2028line\\u2029para\\u007f\\u202eevil"');
    expect(line).not.toMatch(/[\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
  });

  it('logger: false silences the receiver', async () => {
    const spies = (['error', 'warn', 'info', 'debug', 'log'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(() => {}),
    );
    await scenarios({ logger: false });
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });
});

describe('logger objects as they are', () => {
  it('pino: one JSON line per entry, the error under err with its stack and cause', async () => {
    const { stream, text } = lines();
    await scenarios({ logger: pino({ level: 'debug' }, stream) });
    const entries = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const thrown = entries.find((entry) => entry.msg === 'webhook handler threw');
    expect(thrown).toMatchObject({ level: 50, service: 'mail', event: 'bounced', phase: 'handler' });
    expect(thrown.err).toMatchObject({ type: 'Error', message: expect.stringContaining('db down') });
    expect(thrown.err.stack).toMatch(/^Error: db down\n\s+at .*log-sink\.test\.ts/);
    expect(thrown.err.stack).toContain('connection refused');
    expect(entries.map((entry) => entry.msg)).toEqual(
      expect.arrayContaining(['webhook signature rejected', 'webhook processed']),
    );
    expectNoSecretOrBody(text());
  });

  it('winston: the info object, the stack under stack (its own key for errors)', async () => {
    const { stream, text } = lines();
    const logger = winston.createLogger({
      level: 'debug',
      format: winston.format.json(),
      transports: [new winston.transports.Stream({ stream })],
    });
    await scenarios({ logger });
    await new Promise((resolve) => setImmediate(resolve));
    const entries = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const thrown = entries.find((entry) => entry.message === 'webhook handler threw');
    expect(thrown).toMatchObject({ level: 'error', service: 'mail', event: 'bounced', phase: 'handler' });
    expect(thrown.stack).toMatch(/^Error: db down\n\s+at .*log-sink\.test\.ts/);
    expect(thrown.stack).toContain('caused by: Error: connection refused');
    expect(entries.map((entry) => entry.message)).toEqual(
      expect.arrayContaining(['webhook signature rejected', 'webhook processed']),
    );
    expectNoSecretOrBody(text());
  });

  it('bunyan with its standard serializers: the error under err with its stack', async () => {
    const { stream, text } = lines();
    const logger = bunyan.createLogger({
      name: 'app',
      level: 'debug',
      serializers: bunyan.stdSerializers,
      stream,
    });
    await scenarios({ logger });
    const entries = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const thrown = entries.find((entry) => entry.msg === 'webhook handler threw');
    expect(thrown).toMatchObject({ level: 50, service: 'mail', phase: 'handler' });
    expect(thrown.err.stack).toMatch(/^Error: db down\n\s+at .*log-sink\.test\.ts/);
    expectNoSecretOrBody(text());
  });

  it('console: every level, debug included', async () => {
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    await scenarios({ logger: console });
    expect(debug.mock.calls.map(([line]) => line)).toContainEqual(
      expect.stringMatching(/^@svc\/webhooks DEBUG webhook processed service=mail/),
    );
    expect(error.mock.calls.find(([line]) => String(line).includes('handler threw'))?.[1]).toBeInstanceOf(
      Error,
    );
  });

  it('anything else is options_invalid at creation, naming the accepted forms', () => {
    for (const logger of [{ info() {} }, 'pino', 42, null]) {
      let caught: unknown;
      try {
        createMailReceiver({ secret: MAIL_SECRET, logger: logger as unknown as Logger });
      } catch (error) {
        caught = error;
      }
      expect(isWebhookError(caught) && caught.code).toBe('options_invalid');
      expect((caught as Error).message).toContain('pino, winston, bunyan, console');
    }
  });
});
