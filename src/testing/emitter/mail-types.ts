import type { MailEventName } from '../../mail/event-names.js';
import type { EmitterOptions } from './types.js';

/**
 * An email webhook as the management API shows it (the secret masked, except at creation).
 *
 * @example
 * ```ts
 * const webhook: MailEmitterWebhook = emitter.getWebhook(id);
 * if (webhook.status === 'paused') emitter.updateWebhook(id, { status: 'active' });
 * ```
 */
export interface MailEmitterWebhook {
  id: string;
  url: string;
  events: MailEventName[];
  description: string;
  /** Full once (creation response), masked on later reads (email-service §2). */
  secret: string;
  /** `paused` after 10 consecutive fully failed deliveries (email-service §3); nothing is sent while paused. */
  status: 'active' | 'paused';
  /** Fully failed deliveries in a row; a success resets it. */
  consecutiveFailures: number;
  createdAt: string;
  updatedAt: string;
  pausedAt: string | null;
}

/**
 * Body of `createWebhook` (`POST /api/v1/webhooks`).
 *
 * @example
 * ```ts
 * const input: CreateMailWebhookInput = { url: 'https://hooks.example.com/mail', events: ['bounced'], description: 'prod' };
 * const { secret } = emitter.createWebhook(input);
 * ```
 *
 * @example
 * ```ts
 * import type { CreateMailWebhookInput } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: CreateMailWebhookInput): CreateMailWebhookInput {
 *   return value;
 * }
 * ```
 */
export type CreateMailWebhookInput = {
  url: string;
  /** The service's events, or a newer service's (the emitter's `newEvents` option). */
  events: readonly (MailEventName | (string & {}))[];
  description?: string;
  /**
   * The webhook's secret (16+ characters) instead of a generated one, for an app that already has
   * its own: the emulator's addition (`svc-webhooks emulate --secret`); the service always generates it.
   */
  secret?: string;
};

/**
 * Body of `updateWebhook` (`PATCH /api/v1/webhooks/:id`). `status: 'active'` reactivates a paused
 * webhook (the spec does not show the field: our decision, docs/testing.md); `'paused'` pauses it.
 *
 * @example
 * ```ts
 * emitter.updateWebhook(id, { status: 'active' } satisfies UpdateMailWebhookInput); // reactivate
 * ```
 *
 * @example
 * ```ts
 * import type { UpdateMailWebhookInput } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: UpdateMailWebhookInput): UpdateMailWebhookInput {
 *   return value;
 * }
 * ```
 */
export type UpdateMailWebhookInput = {
  url?: string;
  events?: readonly (MailEventName | (string & {}))[];
  description?: string;
  status?: 'active' | 'paused';
};

/**
 * Options of {@link createMailEmitter}.
 *
 * @example
 * ```ts
 * const emitter = createMailEmitter({ clock, pauseAfter: 3, retryOffsetsMs: [1_000, 2_000] } satisfies MailEmitterOptions);
 * ```
 */
export interface MailEmitterOptions extends EmitterOptions {
  /** `client_id` of generated payloads. Default `'client_test'`. */
  clientId?: string;
  /**
   * When attempts 2 and 3 run, in ms after the FIRST attempt started (email-service §6 rule 4:
   * "immediately, after about 1 minute, after about 2 minutes"). Default `[60_000, 120_000]`.
   */
  retryOffsetsMs?: readonly [number, number];
  /** Consecutive fully failed deliveries that pause a webhook (email-service §6 rule 6). Default 10. */
  pauseAfter?: number;
  /** How long attempt records are kept (email-service §8). Default 90 days. */
  retentionMs?: number;
  /** Validate emitted payloads against the library's schemas. Default true; false to send malformed ones. */
  validate?: boolean;
}
