/**
 * Dedup keys of bounded length. A key is built from what the sender chose (a delivery id, a
 * `message_id`) or from a user's key function, and stores cannot hold keys of any length (a Postgres
 * btree index entry is limited to about 2.7 KB) nor U+0000 (Postgres text cannot hold it). Long
 * keys, and keys with U+0000, are therefore replaced by their SHA-256.
 */
import { getNodeCrypto } from '../verify/node-crypto.js';
import { sha256HexJs } from './sha256.js';

/**
 * Longest dedup key the receivers pass to a store as it is, in characters; a longer key is replaced
 * by `<service>:sha256:<64 hex digits>` of the whole key (76 characters). Keeps the memory store's
 * records small (docs/dedup.md) and every key far under the stores' own limit.
 */
export const DEDUP_KEY_HASH_ABOVE = 200;

const encoder = new TextEncoder();

/** The SHA-256 of `text`'s UTF-8, in hex. */
export function sha256Hex(text: string): string {
  const bytes = encoder.encode(text);
  // node:crypto where the runtime has it (reached lazily: the root entry imports no node: module);
  // the same digest in plain JavaScript elsewhere, because this must be synchronous.
  const nodeCrypto = getNodeCrypto();
  if (nodeCrypto && typeof nodeCrypto.createHash === 'function') {
    return nodeCrypto.createHash('sha256').update(bytes).digest('hex');
  }
  return sha256HexJs(bytes);
}

/**
 * `key` when it has at most {@link DEDUP_KEY_HASH_ABOVE} characters and no U+0000, else
 * `<namespace>:sha256:<hex>` of the whole key. Deterministic on every runtime, so every process
 * (Node or edge) sharing a store computes the same key.
 */
export function boundDedupKey(namespace: string, key: string): string {
  return key.length <= DEDUP_KEY_HASH_ABOVE && !key.includes('\u0000')
    ? key
    : `${namespace}:sha256:${sha256Hex(key)}`;
}
