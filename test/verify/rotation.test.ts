import { verifySignature, verifySignatureSync } from '@svc/webhooks/verify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getNodeCrypto } from '../../src/verify/node-crypto.js';
import { expectedSignature } from './support.js';

const body = new TextEncoder().encode('{"event":"contact.created","data":{"id":"c_1"}}');
const secrets = ['whsec_new_0123456789', 'whsec_current_0123456789', 'whsec_old_0123456789'] as const;

// The module object the verifier itself uses (process.getBuiltinModule('node:crypto')).
const nodeCrypto = getNodeCrypto();

afterEach(() => {
  vi.restoreAllMocks();
});

describe('secret rotation (Node path)', () => {
  it('runs on node:crypto here', () => {
    expect(nodeCrypto).not.toBeNull();
  });

  it.each([0, 1, 2])('reports secretIndex %i for the secret that signed', async (index) => {
    const header = expectedSignature(body, secrets[index]!);
    expect(await verifySignature(body, header, secrets)).toEqual({ ok: true, secretIndex: index });
    expect(verifySignatureSync(body, header, secrets)).toEqual({ ok: true, secretIndex: index });
  });

  it('reports the first index when the same secret is listed twice', () => {
    const header = expectedSignature(body, 'whsec_dup_0123456789');
    expect(
      verifySignatureSync(body, header, [
        'whsec_x_0123456789',
        'whsec_dup_0123456789',
        'whsec_dup_0123456789',
      ]),
    ).toEqual({
      ok: true,
      secretIndex: 1,
    });
  });

  // Same work whichever secret matches: every HMAC is computed and every comparison made, so the
  // response time does not tell an attacker which secret of the ring is in use.
  it.each([
    ['the first matches', 0],
    ['the middle one matches', 1],
    ['the last matches', 2],
    ['none matches', -1],
  ])('computes all %s HMACs and compares all of them when %s', async (_label, index) => {
    const header =
      index === -1 ? expectedSignature(body, 'whsec_other') : expectedSignature(body, secrets[index]!);
    const hmac = vi.spyOn(nodeCrypto!, 'createHmac');
    const compare = vi.spyOn(nodeCrypto!, 'timingSafeEqual');
    await verifySignature(body, header, secrets);
    expect(hmac).toHaveBeenCalledTimes(secrets.length);
    expect(compare).toHaveBeenCalledTimes(secrets.length);
    verifySignatureSync(body, header, secrets);
    expect(hmac).toHaveBeenCalledTimes(2 * secrets.length);
    expect(compare).toHaveBeenCalledTimes(2 * secrets.length);
    // Every comparison covers the whole header, prefix included (crm-service §6 rule 2).
    for (const [a, b] of compare.mock.calls) {
      expect(a.byteLength).toBe('sha256='.length + 64);
      expect(b.byteLength).toBe('sha256='.length + 64);
      expect(
        Buffer.from(a as Uint8Array)
          .subarray(0, 7)
          .toString(),
      ).toBe('sha256=');
    }
  });

  it('a malformed header costs no HMAC at all (its format is public)', () => {
    const hmac = vi.spyOn(nodeCrypto!, 'createHmac');
    expect(verifySignatureSync(body, 'sha256=nope', secrets)).toMatchObject({ code: 'signature_malformed' });
    expect(hmac).not.toHaveBeenCalled();
  });
});
