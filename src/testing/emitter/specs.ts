import { crmDataSchemas } from '../../crm/schemas.js';
import { mailPayloadSchemas } from '../../mail/schemas.js';
import type { Fixtures, FixturesOptions } from '../fixtures/fixtures.js';
import type { CrmEmitterOptions, CrmEmitterWebhook } from './crm-types.js';
import type { MailEmitterOptions, MailEmitterWebhook } from './mail-types.js';

type SafeParser = { safeParse(v: unknown): { success: boolean; error?: { message: string } } };

/** What a delivery's body and headers are built from: its id (the same on every attempt), event, emit time. */
type Facts = { id: string; event: string; timestamp: string };

/**
 * What makes one service's sending side differ from the other's; everything else (webhooks, the
 * delivery engine, signing, records) is one implementation. The two specs sit side by side below.
 */
export interface EmitterSpec<W = unknown> {
  service: 'mail' | 'crm';
  /** Whether a webhook gets deliveries; a subscribed one that does not is skipped. */
  receives(webhook: W): boolean;
  /** Fixture options of the payload generator (the account id in every payload). */
  fixtures: FixturesOptions;
  /** A schema-valid payload of `event` with `overrides` applied: what `emit()` sends by default. */
  payload(fixtures: Fixtures, event: string, overrides: Record<string, unknown> | undefined): object;
  /** The schemas `emit()` validates a payload against, and how a refusal starts. */
  schemas: Record<string, SafeParser>;
  invalid(event: string): string;
  /** The exact body of a delivery (its bytes are signed once and never change). */
  body(payload: object, facts: Facts): string;
  /** The request headers of a delivery around its signature. */
  headers(facts: Pick<Facts, 'id' | 'event'>, signature: string): Record<string, string>;
  /** Gaps before attempts 2 and 3, and what they count from. */
  retry: { delaysMs: readonly number[]; from: 'first attempt start' | 'previous attempt end' };
  /**
   * Fully failed deliveries in a row that pause a webhook (the email emitter's rule, in
   * mail-emitter.ts, with its failure count on the webhook), or null: never paused automatically.
   */
  pauseAfter: number | null;
  /** Which deliveries stay on record. */
  keep: { retentionMs?: number; perWebhook?: number };
  /** Why a subscribed webhook gets nothing (the `skipped` reason; pending retries are `cancelled`). */
  idleReason: string;
}

const DAY = 86_400_000;

/** The email service (email-service §3, §6, §8), with the emitter's options applied. */
export function mailEmitterSpec(
  options: MailEmitterOptions = {},
): EmitterSpec<MailEmitterWebhook> & { pauseAfter: number } {
  const {
    vendor = 'Svc',
    clientId = 'client_test',
    retryOffsetsMs = [60_000, 120_000],
    pauseAfter = 10,
    retentionMs = 90 * DAY,
  } = options;
  return {
    service: 'mail',
    // email-service §3: nothing is sent while paused.
    receives: (webhook) => webhook.status === 'active',
    fixtures: { clientId },
    payload: (fixtures, event, overrides) => fixtures.mail(event as 'delivered', overrides),
    schemas: mailPayloadSchemas as unknown as Record<string, SafeParser>,
    invalid: (event) => `Not a valid ${event} payload`,
    // email-service §6: the body is the payload itself, `event` first.
    body: (payload) => JSON.stringify(payload),
    // email-service §6 "Request headers"; Content-Type because every body is JSON (§4).
    headers: ({ id, event }, signature) => ({
      'Content-Type': 'application/json',
      [`X-${vendor}MAIL-Event`]: event,
      [`X-${vendor}MAIL-Sig`]: signature,
      [`X-${vendor}MAIL-Id`]: id,
    }),
    // email-service §6 rule 4: "immediately, after about 1 minute, after about 2 minutes": a timeline.
    retry: { delaysMs: retryOffsetsMs, from: 'first attempt start' },
    // email-service §3: 10 consecutive deliveries that each failed all 3 attempts pause the webhook.
    pauseAfter,
    // email-service §8: attempt records kept 90 days.
    keep: { retentionMs },
    idleReason: 'webhook paused',
  };
}

/** The CRM service (crm-service §2, §3, §6, §8), with the emitter's options applied. */
export function crmEmitterSpec(options: CrmEmitterOptions = {}): EmitterSpec<CrmEmitterWebhook> {
  const {
    vendor = 'Svc',
    tenantId = 'tenant_test',
    retryDelaysMs = [1_000, 2_000],
    historySize = 50,
  } = options;
  return {
    service: 'crm',
    // crm-service §3: an inactive webhook receives nothing.
    receives: (webhook) => webhook.active,
    fixtures: { tenantId },
    payload: (fixtures, event, overrides) => fixtures.crm(event as 'deal.won', overrides),
    schemas: crmDataSchemas as unknown as Record<string, SafeParser>,
    invalid: (event) => `Not valid ${event} data`,
    // crm-service §2: the envelope, fields in this order; `id` is X-Svc-Delivery.
    body: (data, { id, event, timestamp }) =>
      JSON.stringify({ id, event, timestamp, tenant_id: tenantId, data }),
    // crm-service §6 "Request headers", exactly as listed; §9: the User-Agent carries the version 1.0.
    headers: ({ id, event }, signature) => ({
      'Content-Type': 'application/json',
      [`X-${vendor}-Signature`]: signature,
      [`X-${vendor}-Event`]: event,
      [`X-${vendor}-Delivery`]: id,
      'User-Agent': `${vendor}-CRM-Webhook/1.0`,
    }),
    // crm-service §6 rule 5: "spaced 1 s and 2 s apart", counted from the end of the previous attempt.
    retry: { delaysMs: retryDelaysMs, from: 'previous attempt end' },
    // crm-service §3: no automatic deactivation; after the third attempt a delivery just stops.
    pauseAfter: null,
    // crm-service §8: the 50 most recent deliveries.
    keep: { perWebhook: historySize },
    idleReason: 'webhook inactive',
  };
}
