import { WebhookError } from '../../shared/errors.js';
import { checkSecrets } from '../../verify/secrets.js';

/** The body of a management call as an object, or `invalid_payload`. */
export function asObject(input: unknown, what: string): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new WebhookError('invalid_payload', `${what} must be a JSON object.`);
  }
  return input as Record<string, unknown>;
}

/** A string field; `undefined` when absent and optional. */
export function stringField(
  body: Record<string, unknown>,
  key: string,
  required: boolean,
): string | undefined {
  const value = body[key];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string') throw new WebhookError('invalid_payload', `${key} must be a string.`);
  return value;
}

/** A non-empty list of accepted event names, deduplicated in order; `undefined` when absent and optional. */
export function eventsField<N extends string>(
  body: Record<string, unknown>,
  accepted: readonly N[],
  required: boolean,
): N[] | undefined {
  const value = body.events;
  if (value === undefined && !required) return undefined;
  if (!Array.isArray(value) || value.length === 0) {
    throw new WebhookError('invalid_payload', 'events must be a non-empty array of event names.');
  }
  const unknown = value.filter(
    (name) => typeof name !== 'string' || !(accepted as readonly string[]).includes(name),
  );
  if (unknown.length > 0) {
    throw new WebhookError(
      'invalid_payload',
      `Unknown event name(s): ${unknown.map((n) => JSON.stringify(n)).join(', ')}. Accepted: ${accepted.join(', ')}.`,
    );
  }
  return [...new Set(value as N[])];
}

/** A boolean field; `undefined` when absent. */
export function booleanField(body: Record<string, unknown>, key: string): boolean | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new WebhookError('invalid_payload', `${key} must be true or false.`);
  return value;
}

/**
 * The `secret` of a create call: one a receiver accepts (16+ characters, no surrounding whitespace),
 * `undefined` when absent (the emitter generates one, as the services always do).
 */
export function secretField(body: Record<string, unknown>): string | undefined {
  if (body.secret === undefined) return undefined;
  const secret = stringField(body, 'secret', true)!;
  const { problem } = checkSecrets(secret);
  if (problem) throw new WebhookError('invalid_payload', `secret: ${problem.reason}.`);
  return secret;
}
