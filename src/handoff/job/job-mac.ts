/**
 * The MAC that makes a hand-off job trustworthy to a worker: a job is run only if it carries an
 * HMAC-SHA256 that the receiver computed after verifying the delivery, keyed with a key derived from
 * the receiver's `handoffSecret` (the first of them) or, without one, from the webhook secret that
 * verified it. Anyone who can write to the queue but lacks that secret cannot invent a job or change
 * one field of it (docs/security.md "Hand-off threat model"). With a secret per tenant the key is
 * never a tenant's: every tenant holds its own webhook secret, and could sign any job with a key
 * derived from it (receiver/receiver-options.ts requires `handoffSecret` there).
 *
 * Key: HKDF-SHA256 of the secret's UTF-8 bytes, empty salt, info {@link HANDOFF_MAC_INFO}, 32 bytes;
 * derived once per secret. A fixed label, so a receiver with one webhook secret has no new secret to
 * manage, and the key is useful for nothing else (it never verifies a delivery, nor does the webhook
 * secret verify a job).
 *
 * Input: `len(F) ‖ F ‖ body`, where `F` is the UTF-8 of `JSON.stringify([info, v, service,
 * deliveryId, event, key, receivedAt, secretIndex, [[name, value], …]])` (headers sorted by name;
 * a job carrying a `traceparent` appends it as a tenth element, so it is covered too, and a job
 * without one has the same input as before it existed; a job carrying a `route` appends
 * `traceparent ?? null` and `[path, [[name, value], …]]`, its parameters sorted by name: eleven
 * elements, which no job without a route has),
 * `len` its byte length as 4 bytes big-endian, and `body` the verified bytes. JSON of a fixed order is
 * one text per value (lone surrogates are escaped, not replaced), and the length prefix separates it
 * from the body: no two jobs share an input.
 *
 * node:crypto where present, else Web Crypto (the root entry runs on Web-Crypto-only runtimes).
 */
import type { KeyObject } from 'node:crypto';
import { toHex, utf8 } from '../../verify/bytes.js';
import { getSubtle } from '../../verify/hmac.js';
import { getNodeCrypto } from '../../verify/node-crypto.js';
import { timingSafeEqual } from '../../verify/timing-safe-equal.js';
import type { HandoffJob } from './types.js';

/** HKDF `info` of the job key, and the first field of every MAC input: what the key is for. */
export const HANDOFF_MAC_INFO = 'svc-webhooks/handoff-job/v2';

/** The fields a job's MAC covers besides the body (everything but `body` and `mac`). */
export type SignedFields = Omit<HandoffJob, 'body' | 'mac'>;

type NodeCrypto = NonNullable<ReturnType<typeof getNodeCrypto>>;

// Derived keys by secret; the same bound as the verifier's key caches (verify/hmac.ts).
const KEY_CACHE_LIMIT = 256;
const nodeKeys = new Map<string, KeyObject>();
const webKeys = new Map<string, Promise<unknown>>();

function remember<V>(cache: Map<string, V>, secret: string, value: V): V {
  if (cache.size >= KEY_CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(secret, value);
  return value;
}

function nodeKey(node: NodeCrypto, secret: string): KeyObject {
  const cached = nodeKeys.get(secret);
  if (cached) return cached;
  const bits = node.hkdfSync('sha256', secret, new Uint8Array(0), HANDOFF_MAC_INFO, 32);
  return remember(nodeKeys, secret, node.createSecretKey(new Uint8Array(bits)));
}

function webKey(secret: string): Promise<unknown> {
  const cached = webKeys.get(secret);
  if (cached) return cached;
  const subtle = getSubtle();
  const key = subtle
    .importKey('raw', utf8(secret), 'HKDF', false, ['deriveKey'])
    .then((base) =>
      subtle.deriveKey(
        { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: utf8(HANDOFF_MAC_INFO) },
        base,
        { name: 'HMAC', hash: 'SHA-256', length: 256 },
        false,
        ['sign'],
      ),
    );
  key.catch(() => webKeys.delete(secret));
  return remember(webKeys, secret, key);
}

/** `[name, value]` pairs of `record`, sorted by name: one text per record whatever its key order. */
function sortedEntries(record: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `len(F) ‖ F` of the MAC input (the body follows it). */
function fieldBytes(job: SignedFields): Uint8Array {
  const headers = sortedEntries(job.headers);
  const fields = utf8(
    JSON.stringify([
      HANDOFF_MAC_INFO,
      job.v,
      job.service,
      job.deliveryId,
      job.event,
      job.dedupKey,
      job.receivedAt,
      job.secretIndex,
      headers,
      // Only when present: a job without one has the input it always had.
      ...(job.route !== undefined
        ? [job.traceparent ?? null, [job.route.path, sortedEntries(job.route.params)]]
        : job.traceparent === undefined
          ? []
          : [job.traceparent]),
    ]),
  );
  const out = new Uint8Array(4 + fields.length);
  new DataView(out.buffer).setUint32(0, fields.length);
  out.set(fields, 4);
  return out;
}

/** Lowercase hex HMAC of `job` and `body` under the job key of `secret`. */
export async function jobMac(secret: string, job: SignedFields, body: Uint8Array): Promise<string> {
  const fields = fieldBytes(job);
  const node = getNodeCrypto();
  if (node && typeof node.hkdfSync === 'function') {
    return node.createHmac('sha256', nodeKey(node, secret)).update(fields).update(body).digest('hex');
  }
  const input = new Uint8Array(fields.length + body.length);
  input.set(fields);
  input.set(body, fields.length);
  return toHex(new Uint8Array(await getSubtle().sign('HMAC', await webKey(secret), input)));
}

/**
 * The index of the first of `secrets` whose job key produced `job.mac`, or -1. The secret at `first`
 * is tried first (for webhook secrets `job.secretIndex`, the receiver's index: the same secret when
 * both lists are in the same order; for `handoffSecret` 0, the one receivers sign with), then the
 * others, so a worker finds the secret wherever its list holds it.
 */
export async function matchJobMac(
  secrets: readonly string[],
  job: HandoffJob,
  body: Uint8Array,
  first: number = job.secretIndex,
): Promise<number> {
  const hint = first < secrets.length ? first : 0;
  const order = [hint, ...secrets.keys()].filter((index, at) => at === 0 || index !== hint);
  const received = utf8(job.mac);
  for (const index of order) {
    if (timingSafeEqual(received, utf8(await jobMac(secrets[index]!, job, body)))) return index;
  }
  return -1;
}
