import {
  isWebhookError,
  signPayload,
  signPayloadSync,
  verifySignature,
  verifySignatureSync,
} from '@svc/webhooks/verify';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectedSignature } from './support.js';

// A secret the services could issue: MIN_SECRET_LENGTH (16) characters or more, no surrounding whitespace.
const secretArb = fc.string({ minLength: 16, maxLength: 40 }).filter((s) => s.trim() === s);
const bodyArb = fc.uint8Array({ maxLength: 512 });

type Mutation =
  | { kind: 'flip'; at: number; mask: number }
  | { kind: 'insert'; at: number; byte: number }
  | { kind: 'delete'; at: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
);

function mutate(bytes: Uint8Array, m: Mutation): Uint8Array {
  const out = Array.from(bytes);
  if (m.kind === 'insert') out.splice(m.at % (bytes.length + 1), 0, m.byte);
  else if (bytes.length === 0)
    out.push(m.kind === 'flip' ? m.mask : 0); // nothing to change: grow instead
  else if (m.kind === 'flip') out[m.at % bytes.length]! ^= m.mask;
  else out.splice(m.at % bytes.length, 1);
  return Uint8Array.from(out);
}

describe('properties', () => {
  it('no single byte change (flip, insert, delete) verifies', async () => {
    await fc.assert(
      fc.asyncProperty(bodyArb, secretArb, mutationArb, async (body, secret, mutation) => {
        const header = expectedSignature(body, secret);
        const changed = mutate(body, mutation);
        expect(verifySignatureSync(changed, header, secret)).toMatchObject({
          ok: false,
          code: 'signature_mismatch',
        });
        expect(await verifySignature(changed, header, secret)).toMatchObject({
          ok: false,
          code: 'signature_mismatch',
        });
        // ...while the original still does.
        expect(verifySignatureSync(body, header, secret).ok).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('no other secret verifies', async () => {
    // HMAC zero-pads keys to the block size, so "k" and "k\0" are the same key; printable secrets
    // (what the services issue) never differ that way.
    await fc.assert(
      fc.asyncProperty(
        bodyArb,
        secretArb,
        fc.array(secretArb, { minLength: 1, maxLength: 4 }),
        async (body, signer, others) => {
          fc.pre(!others.includes(signer));
          const header = expectedSignature(body, signer);
          expect(verifySignatureSync(body, header, others)).toMatchObject({ code: 'signature_mismatch' });
          expect(await verifySignature(body, header, others)).toMatchObject({ code: 'signature_mismatch' });
          const ring = [...others, signer];
          expect(verifySignatureSync(body, header, ring)).toEqual({ ok: true, secretIndex: others.length });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('sign then verify round-trips, and agrees with node:crypto', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(bodyArb, fc.string()), secretArb, async (body, secret) => {
        const signature = await signPayload(body, secret);
        expect(signature).toBe(expectedSignature(body, secret));
        expect(signPayloadSync(body, secret)).toBe(signature);
        expect(await verifySignature(body, signature, secret)).toEqual({ ok: true, secretIndex: 0 });
      }),
      { numRuns: 200 },
    );
  });

  // Any JS value in any position: a result, or a WebhookError, never a TypeError; sync equals async.
  const anyHeader = fc.oneof(
    fc.anything(),
    fc.array(fc.anything(), { maxLength: 3 }),
    fc.string(),
    fc.constant(`sha256=${'a'.repeat(64)}`),
    fc.stringMatching(/^sha256=[0-9a-fA-F]{60,66}$/),
  );
  const anyBody = fc.oneof(
    fc.anything(),
    bodyArb,
    fc.string(),
    bodyArb.map((b) => b.buffer),
  );
  const anySecrets = fc.oneof(
    fc.anything(),
    secretArb,
    fc.array(fc.oneof(secretArb, fc.anything()), { maxLength: 3 }),
  );

  type Outcome = { value: unknown } | { error: { code: unknown; message: unknown } };
  const settle = async (run: () => unknown): Promise<Outcome> => {
    try {
      return { value: await run() };
    } catch (error) {
      expect(isWebhookError(error), `threw ${String(error)}`).toBe(true);
      const { code, message } = error as { code: unknown; message: unknown };
      return { error: { code, message } };
    }
  };

  it('arbitrary inputs: verifiers only ever throw WebhookError, and sync equals async', async () => {
    await fc.assert(
      fc.asyncProperty(anyBody, anyHeader, anySecrets, async (body, header, secrets) => {
        const asyncOutcome = await settle(() =>
          verifySignature(body as never, header as never, secrets as never),
        );
        const syncOutcome = await settle(() =>
          verifySignatureSync(body as never, header as never, secrets as never),
        );
        expect(syncOutcome).toEqual(asyncOutcome);
        if ('value' in asyncOutcome) {
          expect(asyncOutcome.value).toMatchObject({ ok: expect.any(Boolean) });
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('arbitrary inputs: signers only ever throw WebhookError, and sync equals async', async () => {
    await fc.assert(
      fc.asyncProperty(anyBody, fc.oneof(fc.anything(), secretArb), async (body, secret) => {
        const asyncOutcome = await settle(() => signPayload(body as never, secret as never));
        const syncOutcome = await settle(() => signPayloadSync(body as never, secret as never));
        expect(syncOutcome).toEqual(asyncOutcome);
      }),
      { numRuns: 500 },
    );
  });
});
