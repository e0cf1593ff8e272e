import type { HeadersInput } from './receiver-types.js';

/** A header as read from {@link HeadersInput}: one value, repeated values (Node), or absent. */
export type RawHeaderValue = string | readonly string[] | undefined;

/**
 * Reads a request header from a web `Headers` or a Node `IncomingHttpHeaders`-like record, ignoring
 * case. Pass `lowerName` already lowercased (precompute it once per receiver): Node's records use
 * lowercase keys, so the common case is one property lookup; a record with other-case keys (a
 * hand-built object in a test or a framework that keeps the sender's case) falls back to a scan.
 * Repeated values come back as the array Node gives (web `Headers` has already joined them with
 * `", "`), so a signature verifier can tell a repeated header apart.
 *
 * @example
 * ```ts
 * import { readHeader } from '../core/read-header.js'; // internal: receivers and adapters
 *
 * readHeader(request.headers, 'x-svcmail-sig'); // web Headers
 * readHeader(req.headers, 'x-svcmail-sig'); // node:http IncomingHttpHeaders
 * ```
 */
export function readHeader(headers: HeadersInput, lowerName: string): RawHeaderValue {
  if (isWebHeaders(headers)) return headers.get(lowerName) ?? undefined;
  const direct = headers[lowerName];
  if (direct !== undefined) return direct;
  for (const key in headers) {
    if (key.length === lowerName.length && key.toLowerCase() === lowerName) return headers[key];
  }
  return undefined;
}

/**
 * Reads a header as one string: repeated values are joined with `", "` exactly as web `Headers`
 * does, so both header shapes give the same result; an empty value counts as absent.
 *
 * @example
 * ```ts
 * import { readHeaderString } from '../core/read-header.js'; // internal
 *
 * const deliveryId = readHeaderString(req.headers, 'x-svc-delivery'); // string | undefined
 * ```
 */
export function readHeaderString(headers: HeadersInput, lowerName: string): string | undefined {
  const value = readHeader(headers, lowerName);
  const text = typeof value === 'string' || value === undefined ? value : value.join(', ');
  return text === undefined || text.length === 0 ? undefined : text;
}

function isWebHeaders(headers: HeadersInput): headers is Headers {
  // `instanceof` fails across realms (undici vs a polyfill), so check the method as well.
  return headers instanceof Headers || typeof (headers as { get?: unknown }).get === 'function';
}
