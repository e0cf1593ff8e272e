/**
 * The handler budget of a worker's run (`runJob`'s `timeoutMs`): default the receiver's `leaseMs`
 * minus 1 s, and always below `leaseMs`, so the claim outlives every run. A budget that is not is the
 * worker's mistake, not the delivery's: `options_invalid`, which the caller answers as a `failed`
 * verdict (retried, never dead-lettered), without running a handler.
 */
import { WebhookError } from '../../shared/errors.js';

/** The budget in ms, or the `options_invalid` error of one the lease does not outlast. */
export function runBudget(timeoutMs: number | undefined, leaseMs: number): number | WebhookError {
  const budget = timeoutMs ?? leaseMs - 1_000;
  if (Number.isSafeInteger(budget) && budget > 0 && budget < leaseMs) return budget;
  // A lease ending while a handler runs would let another worker run it at the same time.
  return new WebhookError(
    'options_invalid',
    `runJob: timeoutMs (${String(budget)}) must be a positive whole number below leaseMs (${leaseMs}).`,
  );
}
