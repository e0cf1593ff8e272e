// Helpers shared by the mail and crm parsers (src/crm imports them from here).
import type * as z from 'zod';
import { WebhookError } from '../core/errors.js';
import type { Secrets } from '../verify/secrets.js';
import type { HeaderValue } from '../verify/signature-header.js';
import { verifySignature } from '../verify/verify-signature.js';

// fatal: bytes that are not UTF-8 are invalid JSON (RFC 8259 §8.1), not silently replaced.
// A leading BOM is dropped by the decoder (ignoreBOM false), which JSON.parse would refuse.
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A JSON object (the top level of every delivery body). */
export type JsonObject = Record<string, unknown>;

/** Verifies the signature over the exact bytes; throws the VerifyResult's code as a WebhookError. */
export async function verifyOrThrow(
  bytes: Uint8Array,
  header: HeaderValue,
  secrets: Secrets,
): Promise<number> {
  const result = await verifySignature(bytes, header, secrets);
  if (!result.ok) throw new WebhookError(result.code, result.message);
  return result.secretIndex;
}

/** Parses the body as a JSON object; anything else (empty, not UTF-8, not JSON, not an object) is invalid_json. */
export function parseJsonObject(bytes: Uint8Array, service: string): JsonObject {
  if (bytes.byteLength === 0) throw invalidJson(`The ${service} webhook body is empty.`);
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch (cause) {
    throw invalidJson(`The ${service} webhook body is not valid UTF-8 JSON.`, cause);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw invalidJson(`The ${service} webhook body must be a JSON object, got ${kind}.`);
  }
  return value as JsonObject;
}

function invalidJson(message: string, cause?: unknown): WebhookError {
  return new WebhookError('invalid_json', message, cause === undefined ? {} : { cause });
}

/**
 * invalid_payload with the zod error as `cause`. The message names the failing paths and issue
 * codes, never values: payloads carry personal data (addresses) that must not reach logs.
 */
export function invalidPayload(what: string, error: z.ZodError): WebhookError {
  const seen = new Set<string>();
  for (const issue of error.issues.slice(0, 10)) {
    seen.add(`${issue.path.length === 0 ? '(root)' : issue.path.join('.')} (${issue.code})`);
  }
  const more = error.issues.length > 10 ? ', …' : '';
  return new WebhookError('invalid_payload', `Invalid ${what}: ${[...seen].join(', ')}${more}.`, {
    cause: error,
  });
}
