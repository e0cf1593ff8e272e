/**
 * The answer to a retry (`POST …/deliveries/:deliveryId/retry`), whose body email-service §4 does
 * not show: `success` and `statusCode` when the service reports how the resend went (the emulated API
 * answers with the attempt record), absent when it only accepted the request.
 *
 * @example
 * ```ts
 * const result: RetryResult = await mail.retryDelivery(webhookId, deliveryId);
 * if (result.success === false) console.warn('still failing', result.statusCode);
 * ```
 */
export interface RetryResult {
  /** True or false when the service says how the resend went; undefined when it does not. */
  success?: boolean;
  /** The receiver's HTTP status of the resend, when reported. */
  statusCode?: number;
  error?: string | null;
  [field: string]: unknown;
}

/** Reads a retry answer leniently (camelCase or snake_case; any other shape is "accepted"). */
export function retryResultOf(body: unknown): RetryResult {
  if (typeof body !== 'object' || body === null) return {};
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  out.statusCode ??= out.status_code;
  if (typeof out.success !== 'boolean') delete out.success;
  if (typeof out.statusCode !== 'number') delete out.statusCode;
  if (typeof out.error !== 'string' && out.error !== null) delete out.error;
  return out as RetryResult;
}
