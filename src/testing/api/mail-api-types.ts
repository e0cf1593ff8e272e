/** Credentials of the mocked email API, shared by the API and its key registry. */

/**
 * A scope of the email API (email-service §5).
 *
 * @example
 * ```ts
 * const scopes: MailApiScope[] = ['read'];
 * mailApiHandlers(emitter, { keys: { zm_live_reader: { scopes } } });
 * ```
 *
 * @example
 * ```ts
 * import type { MailApiScope } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: MailApiScope): MailApiScope {
 *   return value;
 * }
 * ```
 */
export type MailApiScope = 'send' | 'read' | 'domains' | 'suppress' | 'privacy' | 'admin';

/**
 * A credential the mocked email API accepts.
 *
 * @example
 * ```ts
 * const limited: MailApiCredential = { scopes: ['admin'], rateLimitPerMinute: 5 };
 * mailApiHandlers(emitter, { keys: { zm_live_limited: limited } });
 * ```
 *
 * @example
 * ```ts
 * import type { MailApiCredential } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: MailApiCredential): MailApiCredential {
 *   return value;
 * }
 * ```
 */
export interface MailApiCredential {
  scopes: readonly MailApiScope[];
  /** Calls per minute (email-service §8). Default 1000. */
  rateLimitPerMinute?: number;
  /** `clientId` shown by `GET /api/v1/auth/me`. Default the emitter's `client_id` `'client_test'`. */
  clientId?: string;
}
