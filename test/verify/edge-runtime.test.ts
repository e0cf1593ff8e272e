// @vitest-environment edge-runtime

import {
  signPayload,
  signPayloadSync,
  timingSafeEqual,
  verifySignature,
  verifySignatureSync,
  WebhookError,
} from '@svc/webhooks/verify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getNodeCrypto } from '../../src/verify/node-crypto.js';
import { GITHUB } from './support.js';

// Expectations here come from published vectors only (no node:crypto): GitHub's example and
// RFC 4231 test case 2 (HMAC-SHA256, key "Jefe").
const RFC4231 = {
  secret: 'Jefe',
  data: 'what do ya want for nothing?',
  signature: 'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
} as const;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('edge runtime (Web Crypto only)', () => {
  it('really runs in the edge runtime, where the verifier does not use node:crypto', () => {
    expect(typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime).toBe('string');
    expect(getNodeCrypto()).toBeNull();
  });

  it('verifies and signs the GitHub vector through crypto.subtle', async () => {
    const sign = vi.spyOn(crypto.subtle, 'sign');
    expect(await verifySignature(GITHUB.payload, GITHUB.signature, GITHUB.secret)).toEqual({
      ok: true,
      secretIndex: 0,
    });
    expect(await signPayload(new TextEncoder().encode(GITHUB.payload), GITHUB.secret)).toBe(GITHUB.signature);
    expect(sign).toHaveBeenCalledTimes(2);
  });

  // "Jefe" is shorter than MIN_SECRET_LENGTH: verifiers refuse it, signing (no minimum) reproduces it.
  it('signs RFC 4231 test case 2 from every body type; verifying with its 4-character key is refused', async () => {
    const bytes = new TextEncoder().encode(RFC4231.data);
    const padded = new Uint8Array(bytes.length + 8);
    padded.set(bytes, 5);
    for (const body of [
      RFC4231.data,
      bytes,
      bytes.slice().buffer,
      padded.subarray(5, 5 + bytes.length),
      new DataView(padded.buffer, 5, bytes.length),
    ]) {
      expect(await signPayload(body, RFC4231.secret)).toBe(RFC4231.signature);
    }
    expect(await verifySignature(RFC4231.data, RFC4231.signature, RFC4231.secret)).toMatchObject({
      ok: false,
      code: 'secret_invalid',
    });
  });

  it('verifies the GitHub vector from every body type', async () => {
    const bytes = new TextEncoder().encode(GITHUB.payload);
    const padded = new Uint8Array(bytes.length + 8);
    padded.set(bytes, 5);
    for (const body of [
      GITHUB.payload,
      bytes,
      bytes.slice().buffer,
      padded.subarray(5, 5 + bytes.length),
      new DataView(padded.buffer, 5, bytes.length),
    ]) {
      expect(await verifySignature(body, GITHUB.signature, GITHUB.secret)).toEqual({
        ok: true,
        secretIndex: 0,
      });
    }
  });

  it('rejects a changed body and reports every failure code as on Node', async () => {
    expect(await verifySignature('Hello, World?', GITHUB.signature, GITHUB.secret)).toMatchObject({
      code: 'signature_mismatch',
    });
    expect(await verifySignature(GITHUB.payload, undefined, GITHUB.secret)).toMatchObject({
      code: 'signature_missing',
    });
    expect(
      await verifySignature(GITHUB.payload, GITHUB.signature.toUpperCase(), GITHUB.secret),
    ).toMatchObject({
      code: 'signature_malformed',
    });
    expect(await verifySignature(GITHUB.payload, GITHUB.signature, ' x')).toMatchObject({
      code: 'secret_invalid',
    });
    await expect(verifySignature({ parsed: true } as never, GITHUB.signature, 'x')).rejects.toMatchObject({
      code: 'body_not_raw',
    });
  });

  it('computes every secret of a rotation whichever matches', async () => {
    const ring = ['whsec_a_0123456789', GITHUB.secret, 'whsec_c_0123456789'];
    for (const [secrets, expected] of [
      [[GITHUB.secret, 'whsec_b_0123456789', 'whsec_c_0123456789'], 0],
      [ring, 1],
      [['whsec_a_0123456789', 'whsec_b_0123456789', GITHUB.secret], 2],
    ] as const) {
      const sign = vi.spyOn(crypto.subtle, 'sign');
      expect(await verifySignature(GITHUB.payload, GITHUB.signature, secrets)).toEqual({
        ok: true,
        secretIndex: expected,
      });
      expect(sign).toHaveBeenCalledTimes(3);
      vi.restoreAllMocks();
    }
  });

  it('compares with the XOR loop (no node:crypto timingSafeEqual)', () => {
    const a = new TextEncoder().encode(GITHUB.signature);
    expect(timingSafeEqual(a, a.slice())).toBe(true);
    const b = a.slice();
    b[70]! ^= 1;
    expect(timingSafeEqual(a, b)).toBe(false);
    expect(timingSafeEqual(a, a.subarray(1))).toBe(false);
  });

  it('the synchronous variants say they need node:crypto', () => {
    for (const run of [
      () => verifySignatureSync(GITHUB.payload, GITHUB.signature, GITHUB.secret),
      () => signPayloadSync(GITHUB.payload, GITHUB.secret),
    ]) {
      expect(run).toThrow(WebhookError);
      expect(run).toThrow(/need node:crypto.*async/);
    }
  });
});
