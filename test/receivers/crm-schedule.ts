/**
 * The CRM service's delivery schedule, sent for real over HTTP: an attempt, then on failure (no 2xx,
 * no answer within 10 s, or no connection) a retry 1 s later, then a last one 2 s after that
 * (crm-service §6 rules 4 and 5, §8 "Attempts per delivery").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Delivery } from './support.js';

/** CRM gaps before attempts 2 and 3, in ms after the previous attempt ended (crm-service §6 rule 5). */
export const CRM_RETRY_GAPS_MS = [1_000, 2_000] as const;
/** CRM per-attempt answer limit (crm-service §8). */
export const CRM_ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * Delivers `delivery` to `url` on the CRM's schedule; returns each attempt's status (0: no answer).
 * `onAnswer` hears each attempt's status as it comes (attempt 0 first).
 */
export async function deliverOnCrmSchedule(
  url: string,
  delivery: Delivery,
  onAnswer?: (attempt: number, status: number) => void,
): Promise<number[]> {
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    let status = 0;
    try {
      const response = await fetch(url, {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
        signal: AbortSignal.timeout(CRM_ATTEMPT_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      status = response.status;
    } catch {
      status = 0;
    }
    statuses.push(status);
    onAnswer?.(attempt, status);
    if (status >= 200 && status < 300) break;
    const gap = CRM_RETRY_GAPS_MS[attempt];
    if (gap !== undefined) await sleep(gap);
  }
  return statuses;
}
