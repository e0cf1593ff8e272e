import {
  isWebhookError,
  MIN_SECRET_LENGTH,
  signPayload,
  signPayloadSync,
  type VerifyResult,
  verifySignature,
  verifySignatureSync,
  WebhookError,
} from '@svc/webhooks/verify';
import { describe, expect, it } from 'vitest';
import { expectedSignature, GITHUB } from './support.js';

type Call = (body: unknown, header: unknown, secrets: unknown) => Promise<VerifyResult>;
const variants: Array<[string, Call]> = [
  ['verifySignature', (b, h, s) => verifySignature(b as string, h as string, s as string)],
  ['verifySignatureSync', async (b, h, s) => verifySignatureSync(b as string, h as string, s as string)],
];

const { payload, secret, signature } = GITHUB;
const digest = signature.slice('sha256='.length);

describe.each(variants)('%s failure codes', (_name, verify) => {
  it.each([
    ['undefined', undefined],
    ['null', null],
    ['empty string', ''],
    ['empty array', []],
    ['array holding an empty string', ['']],
  ])('signature_missing: header %s', async (_label, header) => {
    expect(await verify(payload, header, secret)).toEqual({
      ok: false,
      code: 'signature_missing',
      message: expect.stringContaining('missing'),
    });
  });

  it.each([
    ['an array of two values', [signature, signature]],
    ['an array of two different values', [signature, `sha256=${'0'.repeat(64)}`]],
    ['fetch-joined "a, b"', `${signature}, ${signature}`],
    ['joined without a space', `${signature},${signature}`],
  ])('signature_header_repeated: %s', async (_label, header) => {
    expect(await verify(payload, header, secret)).toMatchObject({
      ok: false,
      code: 'signature_header_repeated',
    });
  });

  it.each([
    ['no prefix', digest, /71 characters|length|characters/],
    ['only the hex digest padded to length', `1234567${digest}`, /does not start with "sha256="/],
    ['uppercase prefix', `SHA256=${digest}`, /uppercase prefix/],
    ['another algorithm', `sha1=${digest}ab`, /does not start/],
    ['too short', signature.slice(0, -1), /70 characters/],
    ['too long', `${signature}0`, /72 characters/],
    ['non-hex digits', `sha256=${'g'.repeat(64)}`, /non-hex/],
    ['uppercase hex', `sha256=${digest.toUpperCase()}`, /uppercase hex/],
    ['surrounding whitespace', ` ${signature}`, /72 characters/],
    ['a non-string value', 42, /not a string/],
    ['an array holding a non-string', [{}], /not a string/],
  ])('signature_malformed: %s', async (_label, header, detail) => {
    const result = await verify(payload, header, secret);
    expect(result).toMatchObject({ ok: false, code: 'signature_malformed' });
    expect(!result.ok && result.message).toMatch(detail);
  });

  it('signature_mismatch: a well-formed signature of other bytes', async () => {
    expect(await verify(`${payload} `, signature, secret)).toEqual({
      ok: false,
      code: 'signature_mismatch',
      message: 'The signature does not match the body for any configured secret.',
    });
    expect(await verify(payload, `sha256=${'0'.repeat(64)}`, secret)).toMatchObject({
      code: 'signature_mismatch',
    });
  });

  const leaky = 'S3CR3T-do-not-print';
  it.each([
    ['empty', '', /is empty/],
    ['whitespace only', '   ', /whitespace/],
    ['a trailing newline', `${leaky}\n`, /whitespace.*newline/],
    ['a leading space', ` ${leaky}`, /whitespace/],
    ['a number', 42, /not a string \(got number\)/],
    ['undefined (none configured)', undefined, /no webhook secret/],
    ['an empty list', [], /no webhook secret/],
    ['a list with one bad entry', [leaky, ''], /secret #2 of 2 is empty/],
    ['a list with a non-string', [leaky, null], /secret #2 of 2 is not a string/],
    ['one character', 'x', /shorter than 16 characters/],
    ['15 characters (MIN_SECRET_LENGTH is 16)', leaky.slice(0, 15), /shorter than 16 characters/],
    ['a rotation with one short entry', [leaky, 'changeme'], /secret #2 of 2 is shorter than 16/],
  ])('secret_invalid: %s, and the secret never appears in the message', async (_label, secrets, reason) => {
    const result = await verify(payload, signature, secrets);
    expect(result).toMatchObject({ ok: false, code: 'secret_invalid' });
    const message = result.ok ? '' : result.message;
    expect(message).toMatch(reason);
    expect(message).not.toContain(leaky);
    expect(message).not.toContain(digest);
  });

  it('accepts a secret of exactly MIN_SECRET_LENGTH characters', async () => {
    expect(MIN_SECRET_LENGTH).toBe(16);
    const sixteen = '0123456789abcdef';
    expect(await verify(payload, expectedSignature(payload, sixteen), sixteen)).toEqual({
      ok: true,
      secretIndex: 0,
    });
  });

  it('a configuration error wins over a request error (fix the receiver first)', async () => {
    expect(await verify(payload, undefined, '')).toMatchObject({ code: 'secret_invalid' });
  });

  it('messages never contain the expected signature', async () => {
    const other = expectedSignature(payload, 'another secret');
    const result = await verify(payload, other, secret);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain(digest);
    expect(JSON.stringify(result)).not.toContain(secret);
  });
});

describe('body_not_raw: a parsed body throws with the fix in the message', () => {
  const notRaw: Array<[string, unknown]> = [
    ['a parsed object', { event: 'delivered' }],
    ['a parsed array', [1, 2]],
    ['null', null],
    ['undefined', undefined],
    ['a number', 42],
  ];

  it.each(notRaw)('%s', async (_label, body) => {
    const check = (error: unknown) => {
      expect(error).toBeInstanceOf(WebhookError);
      expect(isWebhookError(error)).toBe(true);
      const webhookError = error as WebhookError;
      expect(webhookError.code).toBe('body_not_raw');
      expect(webhookError.status).toBe(500);
      expect(webhookError.message).toMatch(/raw request body/);
      expect(webhookError.message).toMatch(/express\.raw\(\)|arrayBuffer\(\)/);
    };
    await verifySignature(body as string, signature, secret).then(
      () => expect.unreachable('verifySignature resolved'),
      check,
    );
    expect.assertions(4 * 6);
    try {
      verifySignatureSync(body as string, signature, secret);
    } catch (error) {
      check(error);
    }
    await signPayload(body as string, secret).then(() => expect.unreachable('signPayload resolved'), check);
    try {
      signPayloadSync(body as string, secret);
    } catch (error) {
      check(error);
    }
  });
});

describe('signing has no minimum secret length (only verifiers guard trust)', () => {
  it('signs with a short key, as node:crypto does', async () => {
    expect(await signPayload(payload, 'k')).toBe(expectedSignature(payload, 'k'));
    expect(signPayloadSync(payload, 'k')).toBe(expectedSignature(payload, 'k'));
  });
});

describe('signing with an invalid secret throws secret_invalid without the secret', () => {
  it.each([
    ['empty', ''],
    ['whitespace', ' whsec_padded '],
    ['not a string', 7],
  ])('%s', async (_label, bad) => {
    const check = (error: unknown) => {
      expect(error).toMatchObject({ name: 'WebhookError', code: 'secret_invalid', status: 500 });
      expect((error as Error).message).not.toContain('whsec_padded');
    };
    await signPayload(payload, bad as string).then(() => expect.unreachable(), check);
    expect(() => signPayloadSync(payload, bad as string)).toThrow(WebhookError);
    try {
      signPayloadSync(payload, bad as string);
    } catch (error) {
      check(error);
    }
  });
});
