/**
 * Body parsing shared by the mail and crm parsers: the JSON object at the top of every delivery and
 * the invalid_payload error of a zod failure.
 */
import type { $ZodError } from 'zod/v4/core';
import { WebhookError } from './errors.js';

// fatal: bytes that are not UTF-8 are invalid JSON (RFC 8259 §8.1), not silently replaced.
// A leading BOM is dropped by the decoder (ignoreBOM false), which JSON.parse would refuse.
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A JSON object (the top level of every delivery body). */
export type JsonObject = Record<string, unknown>;

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
export function invalidPayload(what: string, error: $ZodError): WebhookError {
  const seen = new Set<string>();
  for (const issue of error.issues.slice(0, 10)) {
    seen.add(`${issue.path.length === 0 ? '(root)' : issue.path.join('.')} (${issue.code})`);
  }
  const more = error.issues.length > 10 ? ', …' : '';
  return new WebhookError('invalid_payload', `Invalid ${what}: ${[...seen].join(', ')}${more}.`, {
    cause: error,
  });
}
