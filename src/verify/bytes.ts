import { WebhookError } from '../shared/errors.js';

/**
 * A raw request body as the library accepts it: the exact bytes received. A `string` is encoded as
 * UTF-8, which only reproduces the sender's bytes when the framework decoded them losslessly: prefer
 * bytes.
 *
 * @example
 * ```ts
 * import type { RawBody } from '@svc/webhooks/verify';
 *
 * const body: RawBody = await request.arrayBuffer();
 * ```
 */
export type RawBody = Uint8Array | ArrayBuffer | ArrayBufferView | string;

const encoder = new TextEncoder();

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * The bytes of a raw body, without copying where possible. Anything else (a parsed JSON object,
 * `null`, a number) is a `body_not_raw` error: re-serialised JSON does not reproduce the signed bytes.
 *
 * @example
 * ```ts
 * import { toBytes } from '@svc/webhooks/verify';
 *
 * const bytes: Uint8Array = toBytes(req.body); // a Buffer from express.raw(): no copy
 * ```
 */
export function toBytes(body: RawBody): Uint8Array {
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  throw new WebhookError(
    'body_not_raw',
    `Expected the raw request body (Uint8Array, Buffer, ArrayBuffer or string) but got ${describe(body)}. ` +
      'Signatures cover the exact bytes received: read the body before any JSON parser runs ' +
      '(express.raw(), request.arrayBuffer(), or an adapter from @svc/webhooks).',
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array (a parsed JSON body?)';
  if (typeof value === 'object') return 'an object (a parsed JSON body?)';
  return `a ${typeof value}`;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!];
  return out;
}
