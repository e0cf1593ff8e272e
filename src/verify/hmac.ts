import type { KeyObject } from 'node:crypto';
import { WebhookError } from '../shared/errors.js';
import { toHex, utf8 } from './bytes.js';
import { getNodeCrypto } from './node-crypto.js';

/** The part of Web Crypto's `SubtleCrypto` the library uses. */
export type Subtle = {
  importKey(
    format: 'raw',
    key: Uint8Array,
    algorithm: object | string,
    extractable: boolean,
    usages: string[],
  ): Promise<unknown>;
  deriveKey(
    algorithm: object,
    baseKey: unknown,
    derivedKeyType: object,
    extractable: boolean,
    usages: string[],
  ): Promise<unknown>;
  sign(algorithm: string, key: unknown, data: Uint8Array): Promise<ArrayBuffer>;
};

/** Web Crypto's `crypto.subtle`; `crypto_unavailable` on a runtime without it. */
export function getSubtle(): Subtle {
  const subtle = (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle;
  if (!subtle) {
    throw new WebhookError(
      'crypto_unavailable',
      'Neither node:crypto nor Web Crypto (globalThis.crypto.subtle) is available in this runtime.',
    );
  }
  return subtle;
}

// Imported Web Crypto keys by secret. Receivers use one to a few secrets; the bound keeps a process
// that signs with many throwaway secrets (tests, an emitter) from growing without limit.
const KEY_CACHE_LIMIT = 256;
const keyCache = new Map<string, Promise<unknown>>();

function importKey(secret: string): Promise<unknown> {
  let key = keyCache.get(secret);
  if (!key) {
    if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.delete(keyCache.keys().next().value as string);
    key = getSubtle().importKey('raw', utf8(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    keyCache.set(secret, key);
    key.catch(() => keyCache.delete(secret));
  }
  return key;
}

export type NodeCrypto = NonNullable<ReturnType<typeof getNodeCrypto>>;

export function nodeCryptoOrThrow(): NodeCrypto {
  const node = getNodeCrypto();
  if (!node) {
    throw new WebhookError(
      'crypto_unavailable',
      'The synchronous variants need node:crypto; on Web Crypto runtimes use the async signPayload/verifySignature.',
    );
  }
  return node;
}

// node:crypto keys by secret, for the same reason and with the same bound: `createHmac` given a
// string encodes it into a new buffer on every call; given a KeyObject it uses the key as it is.
const nodeKeys = new Map<string, KeyObject>();

function nodeKey(node: NodeCrypto, secret: string): KeyObject | string {
  // An empty key is left to createHmac as it is (a KeyObject of no bytes is refused on some versions),
  // and so is every key on a runtime whose node:crypto has no KeyObjects.
  if (secret.length === 0 || typeof node.createSecretKey !== 'function') return secret;
  let key = nodeKeys.get(secret);
  if (key === undefined) {
    if (nodeKeys.size >= KEY_CACHE_LIMIT) nodeKeys.delete(nodeKeys.keys().next().value as string);
    key = node.createSecretKey(secret, 'utf8');
    nodeKeys.set(secret, key);
  }
  return key;
}

/** Lowercase hex HMAC-SHA256 of `bytes` keyed with the UTF-8 bytes of `secret`, on Node only. */
export function hmacHexSync(secret: string, bytes: Uint8Array): string {
  return hmacHexWith(nodeCryptoOrThrow(), secret, bytes);
}

/** {@link hmacHexSync} with `node:crypto` already in hand (a verifier computing one per secret). */
export function hmacHexWith(node: NodeCrypto, secret: string, bytes: Uint8Array): string {
  return node.createHmac('sha256', nodeKey(node, secret)).update(bytes).digest('hex');
}

/** Lowercase hex HMAC-SHA256: `node:crypto` where present (faster, synchronous), else Web Crypto. */
export async function hmacHex(secret: string, bytes: Uint8Array): Promise<string> {
  if (getNodeCrypto()) return hmacHexSync(secret, bytes);
  const signature = await getSubtle().sign('HMAC', await importKey(secret), bytes);
  return toHex(new Uint8Array(signature));
}
