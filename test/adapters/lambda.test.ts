import { createHmac } from 'node:crypto';
import { createMailReceiver } from '@svc/webhooks';
import { createLambdaHandler } from '@svc/webhooks/lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceTarget, conformance } from './conformance.js';
import {
  type EventParts,
  functionUrlEvent,
  type GatewayKind,
  httpApiEvent,
  restApiEvent,
  startApiGateway,
} from './support/aws-events.js';
import { crmDelivery, hmac, MAIL_SECRET, mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { PATHS } from './support/servers.js';

const MAX = 64 * 1024;
const SHAPES = [
  ['REST API (payload 1.0)', restApiEvent],
  ['HTTP API (payload 2.0)', httpApiEvent],
  ['function URL', functionUrlEvent],
] as const;

function setup() {
  const receivers = createTestReceivers({ maxBodyBytes: MAX });
  const handler = createLambdaHandler({ [PATHS.mail]: receivers.mail, [PATHS.crm]: receivers.crm });
  return { ...receivers, handler };
}

/** A mail delivery as event parts, its headers in the case the service sends them. */
function mailParts(overrides: Partial<EventParts> = {}, delivery = mailDelivery()): EventParts {
  return {
    headers: {
      'Content-Type': 'application/json',
      'X-SvcMAIL-Event': delivery.event,
      'X-SvcMAIL-Id': delivery.deliveryId,
      'X-SvcMAIL-Sig': delivery.headers['x-svcmail-sig']!,
    },
    body: delivery.body,
    isBase64Encoded: false,
    ...overrides,
  };
}

const errorCode = (result: { body: string }) =>
  (JSON.parse(result.body) as { error: { code: string } }).error.code;

describe.each(SHAPES)('createLambdaHandler with %s events', (_label, build) => {
  it('handles a text body once; a retry is a duplicate', async () => {
    const { handler, handled } = setup();
    const delivery = mailDelivery();
    const result = await handler(build(mailParts({}, delivery)));
    expect(result).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"ok":true}',
      isBase64Encoded: false,
    });
    expect(JSON.parse((await handler(build(mailParts({}, delivery)))).body)).toEqual({
      ok: true,
      result: 'duplicate',
    });
    expect(handled(delivery.deliveryId)).toBe(1);
  });

  it('handles a base64 body', async () => {
    const { handler, handled } = setup();
    const delivery = mailDelivery();
    const event = build(
      mailParts({ body: Buffer.from(delivery.body).toString('base64'), isBase64Encoded: true }, delivery),
    );
    expect((await handler(event)).statusCode).toBe(200);
    expect(handled(delivery.deliveryId)).toBe(1);
  });

  it('verifies the exact bytes of a base64 body a text round trip would change', async () => {
    const { handler, handled } = setup();
    const delivery = mailDelivery();
    // A byte-order mark, then JSON with non-ASCII text: valid, and what the signature covers.
    const json = JSON.stringify({ ...JSON.parse(delivery.body), response: '250 2.0.0 reçu — ok ✓' });
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]);
    const signature = hmac(MAIL_SECRET, bytes);
    // The case is one a decoding adapter fails: text and back drops the mark, so the signature breaks.
    const roundTrip = new TextEncoder().encode(new TextDecoder().decode(bytes));
    expect(hmac(MAIL_SECRET, roundTrip)).not.toBe(signature);
    const parts = mailParts({ body: bytes.toString('base64'), isBase64Encoded: true }, delivery);
    parts.headers['X-SvcMAIL-Sig'] = signature;
    expect((await handler(build(parts))).statusCode).toBe(200);
    expect(handled(delivery.deliveryId)).toBe(1);
  });

  it('verifies bytes that are not UTF-8, then refuses them as JSON (400, not 401)', async () => {
    const { handler, handled } = setup();
    const delivery = mailDelivery();
    // "reçu" in Latin-1: 0xE7 alone is no UTF-8; Buffer's and TextDecoder's text both replace it.
    const bytes = Buffer.from(delivery.body.replace('"gmail"', '"re\u00e7u"'), 'latin1');
    const signature = hmac(MAIL_SECRET, bytes);
    expect(hmac(MAIL_SECRET, Buffer.from(bytes.toString('utf8')))).not.toBe(signature);
    const parts = mailParts({ body: bytes.toString('base64'), isBase64Encoded: true }, delivery);
    parts.headers['X-SvcMAIL-Sig'] = signature;
    const result = await handler(build(parts));
    expect([result.statusCode, errorCode(result)]).toEqual([400, 'invalid_json']);
    expect(handled(delivery.deliveryId)).toBe(0);
  });

  it('matches header names ignoring case', async () => {
    const { handler } = setup();
    const delivery = mailDelivery();
    const headers = Object.fromEntries(
      Object.entries(delivery.headers).map(([name, value]) => [name.toUpperCase(), value]),
    );
    expect((await handler(build({ headers, body: delivery.body, isBase64Encoded: false }))).statusCode).toBe(
      200,
    );
  });

  it('refuses a repeated signature header with 401 signature_header_repeated', async () => {
    const { handler } = setup();
    const delivery = mailDelivery();
    const parts = mailParts({}, delivery);
    parts.headers['X-SvcMAIL-Sig'] = [
      hmac('whsec_forged_0123456789abcdef', delivery.body),
      delivery.headers['x-svcmail-sig']!,
    ];
    const result = await handler(build(parts));
    expect([result.statusCode, errorCode(result)]).toEqual([401, 'signature_header_repeated']);
  });

  it('refuses a forged signature with 401 signature_mismatch', async () => {
    const { handler, handled } = setup();
    const delivery = mailDelivery({ secret: 'whsec_forged_0123456789abcdef' });
    const result = await handler(build(mailParts({}, delivery)));
    expect([result.statusCode, errorCode(result)]).toEqual([401, 'signature_mismatch']);
    expect(handled(delivery.deliveryId)).toBe(0);
  });

  it('refuses bodies over maxBodyBytes with 413 body_too_large, base64 ones before decoding', async () => {
    const { handler } = setup();
    const big = ' '.repeat(MAX + 1);
    for (const body of [big, Buffer.from(big).toString('base64')]) {
      const result = await handler(build(mailParts({ body, isBase64Encoded: body !== big })));
      expect(result.statusCode).toBe(413);
      expect(JSON.parse(result.body)).toEqual({
        error: {
          code: 'body_too_large',
          message: `The body exceeds this receiver's limit of ${MAX} bytes (option maxBodyBytes).`,
          doc_url: 'https://svc.github.io/webhooks/errors.html#body_too_large',
        },
      });
    }
    // Exactly at the limit is read (and then verified).
    const atLimit = ' '.repeat(MAX);
    const result = await handler(
      build(mailParts({ body: Buffer.from(atLimit).toString('base64'), isBase64Encoded: true })),
    );
    expect([result.statusCode, errorCode(result)]).toEqual([401, 'signature_mismatch']);
  });

  it('refuses a body marked base64 that is not with 400 body_unreadable', async () => {
    const { handler } = setup();
    const result = await handler(build(mailParts({ body: '{"not":"base64"}', isBase64Encoded: true })));
    expect([result.statusCode, errorCode(result)]).toEqual([400, 'body_unreadable']);
  });

  it('answers another method 405 with Allow: POST, and an unknown path 404', async () => {
    const { handler } = setup();
    const get = await handler(build({ method: 'GET', headers: {}, body: null, isBase64Encoded: false }));
    expect([get.statusCode, get.headers.allow, errorCode(get)]).toEqual([405, 'POST', 'method_not_allowed']);
    const elsewhere = await handler(build(mailParts({ path: '/elsewhere' })));
    expect([elsewhere.statusCode, errorCode(elsewhere)]).toEqual([404, 'not_found']);
  });

  it('routes a CRM delivery by path', async () => {
    const { handler, handled } = setup();
    const delivery = crmDelivery();
    const result = await handler(
      build({ path: PATHS.crm, headers: delivery.headers, body: delivery.body, isBase64Encoded: false }),
    );
    expect(result.statusCode).toBe(200);
    expect(handled(delivery.deliveryId)).toBe(1);
  });
});

describe('createLambdaHandler with REST API (payload 1.0) events', () => {
  // API Gateway keeps each header name as sent: two spellings of one header are two keys, in
  // `headers` (last value of each) and in `multiValueHeaders` alike.
  it.each([
    ['the forged one first', (good: string, forged: string) => [forged, good]],
    ['the genuine one first', (good: string, forged: string) => [good, forged]],
  ])(
    'refuses a signature header repeated under two spellings (%s) as signature_header_repeated',
    async (_label, order) => {
      const { handler, handled } = setup();
      const delivery = mailDelivery();
      const [first, second] = order(
        delivery.headers['x-svcmail-sig']!,
        hmac('whsec_forged_0123456789abcdef', delivery.body),
      );
      const parts = mailParts({}, delivery);
      parts.headers['X-SvcMAIL-Sig'] = first!;
      parts.headers['x-svcmail-sig'] = second!;
      const event = restApiEvent(parts);
      expect(
        Object.keys(event.multiValueHeaders).filter((k) => k.toLowerCase() === 'x-svcmail-sig'),
      ).toHaveLength(2);
      const result = await handler(event);
      expect([result.statusCode, errorCode(result)]).toEqual([401, 'signature_header_repeated']);
      // The same two spellings in `headers` only (an event without multiValueHeaders).
      const single = await handler({ ...event, multiValueHeaders: {} });
      expect([single.statusCode, errorCode(single)]).toEqual([401, 'signature_header_repeated']);
      expect(handled(delivery.deliveryId)).toBe(0);
    },
  );

  it('still reads a header sent once under an unusual spelling', async () => {
    const { handler, handled } = setup();
    const delivery = mailDelivery();
    const parts = mailParts({}, delivery);
    delete parts.headers['X-SvcMAIL-Sig'];
    parts.headers['x-SVCMAIL-sig'] = delivery.headers['x-svcmail-sig']!;
    expect((await handler(restApiEvent(parts))).statusCode).toBe(200);
    expect(handled(delivery.deliveryId)).toBe(1);
  });
});

describe('createLambdaHandler', () => {
  it('throws options_invalid for an event that is not an HTTP request', async () => {
    const { handler } = setup();
    const sqs = { Records: [{ messageId: 'm1', body: '{}', eventSource: 'aws:sqs' }] };
    await expect(handler(sqs as never)).rejects.toMatchObject({ code: 'options_invalid' });
    await expect(handler(null as never)).rejects.toMatchObject({ code: 'options_invalid' });
  });

  it('given a function, creates the receiver on the first event only', async () => {
    let calls = 0;
    const handler = createLambdaHandler(() => {
      calls++;
      return createMailReceiver({ secret: MAIL_SECRET }).onAny(() => undefined);
    });
    expect(calls).toBe(0);
    for (let i = 0; i < 2; i++) expect((await handler(httpApiEvent(mailParts()))).statusCode).toBe(200);
    expect(calls).toBe(1);
  });

  it('signature over the bytes: computed with node:crypto, not the library', () => {
    // Guards the helpers above: hmac() is node:crypto's HMAC-SHA256 in the services' header form.
    expect(hmac('key', 'body')).toBe(`sha256=${createHmac('sha256', 'key').update('body').digest('hex')}`);
  });
});

describe.each([
  ['REST API (payload 1.0), base64 bodies', 'rest'],
  ['HTTP API (payload 2.0), JSON as text', 'http'],
  ['function URL, base64 bodies', 'url'],
] as const)('Lambda behind an API Gateway stand-in: %s', (_label, kind: GatewayKind) => {
  let target: ConformanceTarget;
  beforeAll(async () => {
    const { handler, handled } = setup();
    const gateway = await startApiGateway(kind, handler as (event: never) => ReturnType<typeof handler>);
    target = { ...gateway, paths: PATHS, handled };
  });
  afterAll(() => target.close());
  // The gateway reads each request whole (and answers a 64 MiB upload 413 itself, past 10 MB).
  conformance(() => target, { maxBodyBytes: MAX, parserInFront: 'raw' });
});
