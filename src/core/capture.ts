/**
 * The opt-in capture hook of the receivers and the capture line format (`svc-webhooks replay`).
 * A capture holds the exact body bytes and the request headers of one delivery, before verification:
 * it is sensitive data (personal data in the payload, a signature that stays valid for those bytes).
 */
import type { HeadersInput } from './receiver-types.js';

/**
 * One request as a receiver saw it, given to the `capture` option before the signature is checked.
 *
 * @example
 * ```ts
 * import { appendFileSync } from 'node:fs';
 * import { createMailReceiver, formatCaptureLine, type CapturedDelivery } from '@svc/webhooks';
 *
 * const receiver = createMailReceiver({
 *   secret,
 *   capture: (delivery: CapturedDelivery) => appendFileSync('captures.ndjson', formatCaptureLine(delivery)),
 * });
 * ```
 */
export interface CapturedDelivery {
  service: string;
  /** Epoch ms on the receiver's clock. */
  receivedAt: number;
  /** The request headers as received (never a secret: the receiver's secret is not in them). */
  headers: HeadersInput;
  /** The exact body bytes. Do not keep a reference after the hook returns: copy them if you need to. */
  body: Uint8Array;
}

// Headers a proxy in front of the app may add that carry credentials of the app, not of the delivery.
const DROPPED = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** Lowercase header names to one string value each (repeated values joined with ", " like `Headers`). */
function headerRecord(headers: HeadersInput): Record<string, string> {
  const out: Record<string, string> = {};
  const entries: Iterable<[string, string | readonly string[] | undefined]> =
    typeof (headers as Headers).entries === 'function' && typeof (headers as Headers).get === 'function'
      ? (headers as Headers).entries()
      : Object.entries(headers as Record<string, string | readonly string[] | undefined>);
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (value === undefined || DROPPED.has(lower)) continue;
    out[lower] = typeof value === 'string' ? value : value.join(', ');
  }
  return out;
}

function base64(bytes: Uint8Array): string {
  // btoa takes a binary string; built in chunks so a large body does not overflow the call stack.
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/**
 * One capture as an NDJSON line (with its `\n`): `{ v: 1, service, receivedAt, headers, body }`,
 * the body base64 of the exact bytes, headers lowercased without `authorization`, `cookie` and
 * `proxy-authorization`. `svc-webhooks replay` re-sends it; docs/cli.md describes the format.
 *
 * @example
 * ```ts
 * import { appendFileSync } from 'node:fs';
 * import { createCrmReceiver, formatCaptureLine } from '@svc/webhooks';
 *
 * createCrmReceiver({ secret, capture: (d) => appendFileSync('crm.ndjson', formatCaptureLine(d), { mode: 0o600 }) });
 * ```
 */
export function formatCaptureLine(delivery: CapturedDelivery): string {
  return `${JSON.stringify({
    v: 1,
    service: delivery.service,
    receivedAt: new Date(delivery.receivedAt).toISOString(),
    headers: headerRecord(delivery.headers),
    body: base64(delivery.body),
  })}\n`;
}
