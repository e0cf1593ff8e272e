import { type RawBody, toBytes, utf8 } from './bytes.js';
import { hmacHex, hmacHexSync } from './hmac.js';
import { checkSecrets, type Secrets } from './secrets.js';
import { type HeaderValue, readSignatureHeader, SIGNATURE_PREFIX } from './signature-header.js';
import { timingSafeEqual } from './timing-safe-equal.js';

/** Why a signature did not verify. */
export type VerifyFailureCode =
  | 'signature_missing'
  | 'signature_header_repeated'
  | 'signature_malformed'
  | 'signature_mismatch'
  | 'secret_invalid';

/**
 * Result of {@link verifySignature}: which secret matched (its index in the list given), or why none
 * did. `message` is safe to log: it never contains a secret or the expected signature.
 */
export type VerifyResult =
  | { ok: true; secretIndex: number }
  | { ok: false; code: VerifyFailureCode; message: string };

type Prepared = { header: Uint8Array; secrets: readonly string[]; bytes: Uint8Array } | VerifyResult;

function prepare(body: RawBody, header: HeaderValue, secrets: Secrets): Prepared {
  // The body is checked first: passing a parsed object is a programming error and throws.
  const bytes = toBytes(body);
  const { list, problem } = checkSecrets(secrets);
  if (problem) return { ok: false, code: 'secret_invalid', message: `Cannot verify: ${problem.reason}.` };
  const value = readSignatureHeader(header);
  if (typeof value !== 'string') return { ok: false, ...value };
  return { header: utf8(value), secrets: list, bytes };
}

// crm-service §6 rule 2: the whole header value, prefix included, is compared in constant time.
// Every secret is computed and compared, with no early exit, whichever one matches.
function match(header: Uint8Array, digests: readonly string[]): VerifyResult {
  let secretIndex = -1;
  for (let i = 0; i < digests.length; i++) {
    const equal = timingSafeEqual(header, utf8(SIGNATURE_PREFIX + digests[i]));
    secretIndex = equal && secretIndex === -1 ? i : secretIndex;
  }
  return secretIndex === -1
    ? {
        ok: false,
        code: 'signature_mismatch',
        message: 'The signature does not match the body for any configured secret.',
      }
    : { ok: true, secretIndex };
}

/**
 * Verifies a signature header against the exact body bytes, with one secret or several (rotation).
 * Runs on Node (through `node:crypto`) and on Web Crypto runtimes (edge, Workers, Bun, Deno).
 * Resolves to a {@link VerifyResult}; throws only `body_not_raw` when given a parsed object.
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
export async function verifySignature(body: RawBody, header: HeaderValue, secrets: Secrets): Promise<VerifyResult> {
  const prepared = prepare(body, header, secrets);
  if ('ok' in prepared) return prepared;
  const digests: string[] = [];
  for (const secret of prepared.secrets) digests.push(await hmacHex(secret, prepared.bytes));
  return match(prepared.header, digests);
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
  return match(
    prepared.header,
    prepared.secrets.map((secret) => hmacHexSync(secret, prepared.bytes)),
  );
}
