/**
 * What a framework hands over for a header: one value, repeated values, or nothing.
 *
 * @example
 * ```ts
 * import type { HeaderValue } from '@svc/webhooks/verify';
 *
 * const header: HeaderValue = req.headers['x-svcmail-sig']; // string | string[] | undefined on Node
 * ```
 */
export type HeaderValue = string | readonly string[] | null | undefined;

/**
 * The signature headers' prefix: `sha256=` + 64 lowercase hex digits (email-service §6, crm-service §6).
 *
 * @example
 * ```ts
 * import { SIGNATURE_PREFIX } from '@svc/webhooks/verify';
 *
 * const looksSigned = (header: string) => header.startsWith(SIGNATURE_PREFIX);
 * ```
 */
export const SIGNATURE_PREFIX = 'sha256=';
export const SIGNATURE_LENGTH = SIGNATURE_PREFIX.length + 64;

export type HeaderProblem = {
  code: 'signature_missing' | 'signature_header_repeated' | 'signature_malformed';
  message: string;
};

const ANY_HEX = /^[0-9a-fA-F]{64}$/;

/** Whether `value` holds only 0-9 and a-f from `from` on (a loop: cheaper than a regex per request). */
function isLowerHexFrom(value: string, from: number): boolean {
  for (let i = from; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/**
 * The single signature header value, or why it cannot be a signature. Only the header's public
 * form is inspected here; its value is compared in constant time by the verifier.
 */
export function readSignatureHeader(header: HeaderValue): string | HeaderProblem {
  // Typed as HeaderValue, but called from JavaScript too: anything that is not a string is handled.
  let value: unknown = header;
  if (Array.isArray(header)) {
    if (header.length > 1) return repeated();
    value = header[0];
  }
  if (value === undefined || value === null || value === '') {
    return { code: 'signature_missing', message: 'The signature header is missing or empty.' };
  }
  if (typeof value !== 'string') return malformed(`is not a string (got ${typeof value})`);
  if (value.length !== SIGNATURE_LENGTH) {
    // Fetch's Headers joins repeated headers with ", ".
    if (value.includes(', sha256=') || value.includes(',sha256=')) return repeated();
    return malformed(`has ${value.length} characters, expected ${SIGNATURE_LENGTH}`);
  }
  if (!value.startsWith(SIGNATURE_PREFIX)) {
    return malformed(
      value.slice(0, 7).toLowerCase() === SIGNATURE_PREFIX
        ? 'has an uppercase prefix; the prefix is "sha256="'
        : 'does not start with "sha256="',
    );
  }
  if (!isLowerHexFrom(value, SIGNATURE_PREFIX.length)) {
    const digest = value.slice(SIGNATURE_PREFIX.length);
    return malformed(ANY_HEX.test(digest) ? 'has uppercase hex digits' : 'has non-hex characters');
  }
  return value;
}

function repeated(): HeaderProblem {
  return {
    code: 'signature_header_repeated',
    message: 'The signature header was sent more than once; exactly one is expected.',
  };
}

function malformed(detail: string): HeaderProblem {
  return {
    code: 'signature_malformed',
    message: `The signature header ${detail}; expected "sha256=" followed by 64 lowercase hex digits.`,
  };
}
