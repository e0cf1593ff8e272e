import { type RawBody, toBytes } from './bytes.js';
import { hmacHex, hmacHexWith, nodeCryptoOrThrow } from './hmac.js';
import { getNodeCrypto } from './node-crypto.js';
import { checkSecrets, type Secrets } from './secrets.js';
import {
  type HeaderValue,
  readSignatureHeader,
  SIGNATURE_LENGTH,
  SIGNATURE_PREFIX,
} from './signature-header.js';
import { timingSafeEqual } from './timing-safe-equal.js';

/**
 * Why a signature did not verify.
 *
 * @example
 * ```ts
 * import type { VerifyFailureCode } from '@svc/webhooks/verify';
 *
 * const misconfigured = (code: VerifyFailureCode) => code === 'secret_invalid';
 * ```
 */
export type VerifyFailureCode =
  | 'signature_missing'
  | 'signature_header_repeated'
  | 'signature_malformed'
  | 'signature_mismatch'
  | 'secret_invalid';

/**
 * Result of {@link verifySignature}: which secret matched (its index in the list given), or why none
 * did. `message` is safe to log: it never contains a secret or the expected signature.
 *
 * @example
 * ```ts
 * import { type VerifyResult, verifySignature } from '@svc/webhooks/verify';
 *
 * const result: VerifyResult = await verifySignature(body, request.headers.get('X-Svc-Signature'), secrets);
 * if (!result.ok) console.warn(result.code, result.message);
 * ```
 */
export type VerifyResult =
  | { ok: true; secretIndex: number }
  | { ok: false; code: VerifyFailureCode; message: string };

type Prepared = { header: string; secrets: readonly string[]; bytes: Uint8Array } | VerifyResult;

// Scratch bytes for the comparison, filled and compared synchronously (no await in between), so
// concurrent verifications cannot interleave; allocation-free, because a fresh typed array (or
// TextEncoder) per call costs more than the HMAC of a small body.
const received = new Uint8Array(SIGNATURE_LENGTH);
const expected = new Uint8Array(SIGNATURE_LENGTH);
for (let i = 0; i < SIGNATURE_PREFIX.length; i++) expected[i] = SIGNATURE_PREFIX.charCodeAt(i);

/** Writes an ASCII string of the header's length (the checked header, or a hex digest at offset 7). */
function writeAscii(target: Uint8Array, value: string, offset: number): Uint8Array {
  for (let i = 0; i < value.length; i++) target[offset + i] = value.charCodeAt(i);
  return target;
}

function prepare(body: RawBody, header: HeaderValue, secrets: Secrets): Prepared {
  // The body is checked first: passing a parsed object is a programming error and throws.
  const bytes = toBytes(body);
  const { list, problem } = checkSecrets(secrets);
  if (problem) return { ok: false, code: 'secret_invalid', message: `Cannot verify: ${problem.reason}.` };
  const value = readSignatureHeader(header);
  if (typeof value !== 'string') return { ok: false, ...value };
  return { header: value, secrets: list, bytes };
}

// crm-service §6 rule 2: the whole header value, prefix included, is compared in constant time.
// Every secret is computed and compared, with no early exit, whichever one matches.
function match(header: string, digests: readonly string[]): VerifyResult {
  writeAscii(received, header, 0);
  let secretIndex = -1;
  for (let i = 0; i < digests.length; i++) {
    const equal = timingSafeEqual(received, writeAscii(expected, digests[i]!, SIGNATURE_PREFIX.length));
    secretIndex = equal && secretIndex === -1 ? i : secretIndex;
  }
  return secretIndex === -1 ? mismatch() : { ok: true, secretIndex };
}

/** A new object each time: callers own the result they get. */
function mismatch(): VerifyResult {
  return {
    ok: false,
    code: 'signature_mismatch',
    message: 'The signature does not match the body for any configured secret.',
  };
}

async function verifyWebCrypto(body: RawBody, header: HeaderValue, secrets: Secrets): Promise<VerifyResult> {
  const prepared = prepare(body, header, secrets);
  if ('ok' in prepared) return prepared;
  const digests: string[] = [];
  for (const secret of prepared.secrets) digests.push(await hmacHex(secret, prepared.bytes));
  return match(prepared.header, digests);
}

/**
 * Verifies a signature header against the exact body bytes, with one secret or several (rotation).
 * Runs on Node (through `node:crypto`) and on Web Crypto runtimes (edge, Workers, Bun, Deno).
 * Resolves to a {@link VerifyResult}; rejects only with `body_not_raw` when given a parsed object.
 *
 * @example
 * ```ts
 * import { verifySignature } from '@svc/webhooks/verify';
 *
 * const body = new Uint8Array(await request.arrayBuffer());
 * const result = await verifySignature(body, request.headers.get('X-Svc-Signature'), [newSecret, oldSecret]);
 * if (!result.ok) return new Response(null, { status: 401 });
 * ```
 */
export function verifySignature(body: RawBody, header: HeaderValue, secrets: Secrets): Promise<VerifyResult> {
  // On Node the work is synchronous: one settled promise instead of an await per secret.
  if (!getNodeCrypto()) return verifyWebCrypto(body, header, secrets);
  try {
    return Promise.resolve(verifySignatureSync(body, header, secrets));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Synchronous {@link verifySignature} for Node (and Bun/Deno); throws `crypto_unavailable` on
 * runtimes without `node:crypto`.
 *
 * @example
 * ```ts
 * import { verifySignatureSync } from '@svc/webhooks/verify';
 *
 * const result = verifySignatureSync(req.body, req.headers['x-svcmail-sig'], process.env.SVC_MAIL_WEBHOOK_SECRET!);
 * ```
 */
export function verifySignatureSync(body: RawBody, header: HeaderValue, secrets: Secrets): VerifyResult {
  const prepared = prepare(body, header, secrets);
  if ('ok' in prepared) return prepared;
  return verifyCheckedSync(prepared.bytes, prepared.header, prepared.secrets);
}

/**
 * {@link verifySignatureSync} for secrets already checked (a receiver checks its own when it is made,
 * receiver-options.ts): the header is read and every secret computed and compared, with no early
 * exit, but neither the secrets nor the body's type are checked again, and no digest list is built.
 */
export function verifyCheckedSync(
  bytes: Uint8Array,
  header: HeaderValue,
  secrets: readonly string[],
): VerifyResult {
  const value = readSignatureHeader(header);
  if (typeof value !== 'string') return { ok: false, ...value };
  const node = nodeCryptoOrThrow();
  writeAscii(received, value, 0);
  let secretIndex = -1;
  for (let i = 0; i < secrets.length; i++) {
    const digest = hmacHexWith(node, secrets[i]!, bytes);
    // Both arrays are SIGNATURE_LENGTH bytes: node:crypto's comparison, in constant time.
    const equal = node.timingSafeEqual(received, writeAscii(expected, digest, SIGNATURE_PREFIX.length));
    secretIndex = equal && secretIndex === -1 ? i : secretIndex;
  }
  return secretIndex === -1 ? mismatch() : { ok: true, secretIndex };
}
