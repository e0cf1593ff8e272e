import { Buffer } from 'node:buffer';
import { signPayload, signPayloadSync, verifySignature, verifySignatureSync } from '@svc/webhooks/verify';
import { describe, expect, it } from 'vitest';
import { expectedSignature, GITHUB, pseudoRandomBytes } from './support.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('GitHub X-Hub-Signature-256 vector', () => {
  it('signs to the documented value', async () => {
    expect(await signPayload(GITHUB.payload, GITHUB.secret)).toBe(GITHUB.signature);
    expect(signPayloadSync(utf8(GITHUB.payload), GITHUB.secret)).toBe(GITHUB.signature);
  });

  it('verifies the documented value from bytes and from a string', async () => {
    for (const body of [GITHUB.payload, utf8(GITHUB.payload), Buffer.from(GITHUB.payload)]) {
      expect(await verifySignature(body, GITHUB.signature, GITHUB.secret)).toEqual({
        ok: true,
        secretIndex: 0,
      });
      expect(verifySignatureSync(body, GITHUB.signature, GITHUB.secret)).toEqual({
        ok: true,
        secretIndex: 0,
      });
    }
  });

  it('accepts the header as a one-element array (Node IncomingHttpHeaders style)', async () => {
    expect(await verifySignature(GITHUB.payload, [GITHUB.signature], GITHUB.secret)).toEqual({
      ok: true,
      secretIndex: 0,
    });
  });
});

const secret = 'whsec_vectors_2024';
const mib = pseudoRandomBytes(1024 * 1024);

// Each body as the exact bytes a sender signed; the expectation comes from node:crypto.
const vectors: Array<[name: string, bytes: Uint8Array]> = [
  ['empty', new Uint8Array(0)],
  ['emoji (4-byte UTF-8)', utf8('{"subject":"🚀 launch 👩🏽‍💻"}')],
  ['\\u00e9 escape (ASCII)', utf8('{"name":"Jos\\u00e9"}')],
  ['literal é (UTF-8 C3 A9)', utf8('{"name":"José"}')],
  ['CRLF line endings', utf8('{\r\n  "event": "delivered"\r\n}\r\n')],
  ['BOM-prefixed', Uint8Array.of(0xef, 0xbb, 0xbf, ...utf8('{"event":"delivered"}'))],
  ['1 MiB of arbitrary bytes', mib],
];

describe.each(vectors)('vector: %s', (_name, bytes) => {
  const expected = expectedSignature(bytes, secret);

  it('signs to the node:crypto value, async and sync', async () => {
    expect(await signPayload(bytes, secret)).toBe(expected);
    expect(signPayloadSync(bytes, secret)).toBe(expected);
  });

  it('verifies, async and sync', async () => {
    expect(await verifySignature(bytes, expected, secret)).toEqual({ ok: true, secretIndex: 0 });
    expect(verifySignatureSync(bytes, expected, secret)).toEqual({ ok: true, secretIndex: 0 });
  });

  it('does not verify with one byte appended, the last byte changed, or another secret', async () => {
    const appended = new Uint8Array(bytes.length + 1);
    appended.set(bytes);
    appended[bytes.length] = 0x0a;
    expect(await verifySignature(appended, expected, secret)).toMatchObject({ code: 'signature_mismatch' });
    expect(verifySignatureSync(appended, expected, secret)).toMatchObject({ code: 'signature_mismatch' });
    if (bytes.length > 0) {
      const changed = bytes.slice();
      changed[changed.length - 1]! ^= 0x01;
      expect(verifySignatureSync(changed, expected, secret)).toMatchObject({ code: 'signature_mismatch' });
    }
    expect(verifySignatureSync(bytes, expected, `${secret}x`)).toMatchObject({ code: 'signature_mismatch' });
  });
});

describe('Unicode and encoding', () => {
  it('the \\u00e9 escape and the literal é are different bytes, so different signatures', () => {
    const escaped = expectedSignature(utf8('{"name":"Jos\\u00e9"}'), secret);
    const literal = expectedSignature(utf8('{"name":"José"}'), secret);
    expect(escaped).not.toBe(literal);
    expect(verifySignatureSync('{"name":"José"}', escaped, secret).ok).toBe(false);
    expect(verifySignatureSync('{"name":"Jos\\u00e9"}', escaped, secret).ok).toBe(true);
    // Both parse to the same object: verifying after JSON.parse + re-serialisation cannot work.
    expect(JSON.parse('{"name":"Jos\\u00e9"}')).toEqual(JSON.parse('{"name":"José"}'));
  });

  it('a string body is the lesser path: a default TextDecoder drops the BOM and the signature no longer matches', () => {
    const bytes = Uint8Array.of(0xef, 0xbb, 0xbf, ...utf8('{"event":"delivered"}'));
    const signature = expectedSignature(bytes, secret);
    expect(verifySignatureSync(bytes, signature, secret).ok).toBe(true);
    const decoded = new TextDecoder().decode(bytes);
    expect(verifySignatureSync(decoded, signature, secret)).toMatchObject({ code: 'signature_mismatch' });
    // Decoding that keeps the BOM round-trips.
    const kept = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
    expect(verifySignatureSync(kept, signature, secret).ok).toBe(true);
  });

  it('a lone surrogate in a string body is encoded as U+FFFD, like every UTF-8 encoder', () => {
    const signature = expectedSignature(Uint8Array.of(0xef, 0xbf, 0xbd), secret);
    expect(verifySignatureSync('\ud800', signature, secret).ok).toBe(true);
  });
});

describe('body types', () => {
  const payload = utf8('{"event":"deal.won","data":{"deal_id":"d_1"}}');
  const signature = expectedSignature(payload, secret);
  // The payload placed in the middle of a larger buffer, to catch views that ignore byteOffset.
  const padded = new Uint8Array(payload.length + 10);
  padded.fill(0x41);
  padded.set(payload, 7);
  const bodies: Array<[string, () => unknown]> = [
    ['Uint8Array', () => payload],
    ['Buffer', () => Buffer.from(payload)],
    ['Buffer sliced from a pooled buffer', () => Buffer.from(padded).subarray(7, 7 + payload.length)],
    ['ArrayBuffer', () => payload.slice().buffer],
    ['Uint8Array subarray with an offset', () => padded.subarray(7, 7 + payload.length)],
    ['DataView with an offset', () => new DataView(padded.buffer, 7, payload.length)],
    ['string', () => new TextDecoder().decode(payload)],
  ];

  it.each(bodies)('%s verifies, sync and async', async (_name, make) => {
    const body = make() as Uint8Array;
    expect(await verifySignature(body, signature, secret)).toEqual({ ok: true, secretIndex: 0 });
    expect(verifySignatureSync(body, signature, secret)).toEqual({ ok: true, secretIndex: 0 });
    expect(await signPayload(body, secret)).toBe(signature);
    expect(signPayloadSync(body, secret)).toBe(signature);
  });

  it('a view of the whole padded buffer does not verify (the offset matters)', () => {
    expect(verifySignatureSync(new DataView(padded.buffer), signature, secret)).toMatchObject({
      code: 'signature_mismatch',
    });
  });
});
