import { WebhookError } from '../shared/errors.js';

/** An id as one path segment: encoded, so `a/b` cannot reach another route; empty is refused. */
export function id(value: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new WebhookError('options_invalid', 'An id must be a non-empty string.');
  }
  return encodeURIComponent(value);
}
