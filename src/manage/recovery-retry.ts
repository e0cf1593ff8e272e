import { isWebhookError, type WebhookError, type WebhookErrorCode } from '../shared/errors.js';
import type { MailClient } from './mail-client.js';
import type { RecoveryItem, RecoveryOutcome, RecoveryReport } from './recovery-types.js';

/** Why a run stopped early. */
export type Stop = NonNullable<RecoveryReport['stopped']>;

// The answer concerns this one delivery: note it and go on with the next.
const PER_DELIVERY: readonly WebhookErrorCode[] = ['not_found', 'conflict', 'request_invalid'];
// The retry may or may not have been sent.
const UNKNOWN: readonly WebhookErrorCode[] = ['request_timeout', 'api_unavailable'];
// Outcomes of a delivery whose retry was sent (or may have been).
const RETRIED: readonly RecoveryOutcome[] = ['succeeded', 'still_failing', 'unconfirmed'];

/** Why the run stops after `error`; anything but an abort or a `WebhookError` is a bug and rethrown. */
export function stopFor(error: unknown, signal: AbortSignal | undefined): Stop {
  if (signal?.aborted) return { code: 'aborted', message: 'The run was aborted.' };
  if (isWebhookError(error)) return { code: error.code, message: error.message };
  throw error;
}

// A reactivation refused for one webhook (deleted meanwhile, a conflict, a refused body).
const PER_WEBHOOK: readonly WebhookErrorCode[] = ['not_found', 'conflict', 'request_invalid'];

/**
 * Reactivates a paused email webhook (email-service §3: `PATCH`, `{ status: 'active' }`). A refusal
 * that concerns this webhook alone is `refused` (its deliveries cannot be resent; the run goes on);
 * any other failure stops the run.
 */
export async function reactivate(
  client: MailClient,
  webhookId: string,
  signal: AbortSignal | undefined,
): Promise<{ refused: WebhookError | null; stop: Stop | null }> {
  try {
    await client.reactivateWebhook(webhookId, signal ? { signal } : {});
    return { refused: null, stop: null };
  } catch (error) {
    if (isWebhookError(error) && !signal?.aborted && PER_WEBHOOK.includes(error.code)) {
      return { refused: error, stop: null };
    }
    return { refused: null, stop: stopFor(error, signal) };
  }
}

/** `entry`, not tried. */
export const skip = (entry: RecoveryItem, reason: string): RecoveryItem => ({
  ...entry,
  outcome: 'skipped',
  reason,
});

/**
 * Resends one email delivery (email-service §6 rule 5) and classifies the answer. A failure about
 * this delivery alone is noted on it; one that would fail every call stops the run.
 */
export async function resend(
  client: MailClient,
  webhookId: string,
  entry: RecoveryItem,
  signal: AbortSignal | undefined,
): Promise<{ result: RecoveryItem; stop: Stop | null }> {
  try {
    const answer = await client.retryDelivery(webhookId, entry.deliveryId, signal ? { signal } : {});
    const statusCode = answer.statusCode ?? null;
    if (answer.success === true)
      return { result: { ...entry, outcome: 'succeeded', statusCode }, stop: null };
    if (answer.success === false) {
      const reason = typeof answer.error === 'string' ? { reason: answer.error } : {};
      return { result: { ...entry, outcome: 'still_failing', statusCode, ...reason }, stop: null };
    }
    return {
      result: { ...entry, outcome: 'unconfirmed', reason: 'the service did not report the outcome' },
      stop: null,
    };
  } catch (error) {
    if (isWebhookError(error) && !signal?.aborted) {
      const noted = { ...entry, reason: error.message, code: error.code };
      if (PER_DELIVERY.includes(error.code))
        return { result: { ...noted, outcome: 'not_recoverable' }, stop: null };
      if (UNKNOWN.includes(error.code)) return { result: { ...noted, outcome: 'unconfirmed' }, stop: null };
    }
    const stop = stopFor(error, signal);
    return { result: skip(entry, `the run stopped: ${stop.code}`), stop };
  }
}

/** Files each item of a webhook under its outcome in `report` (and under `retried` when resent). */
export function fileItems(report: RecoveryReport, items: readonly RecoveryItem[]): void {
  const lists: Record<RecoveryOutcome, RecoveryItem[]> = {
    succeeded: report.succeeded,
    still_failing: report.stillFailing,
    unconfirmed: report.unconfirmed,
    not_recoverable: report.notRecoverable,
    pending: report.pending,
    skipped: report.skipped,
  };
  for (const entry of items) {
    if (RETRIED.includes(entry.outcome)) report.retried.push(entry);
    lists[entry.outcome].push(entry);
  }
}
