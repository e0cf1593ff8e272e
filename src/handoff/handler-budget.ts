/**
 * The handler budget a worker runs jobs with, checked against what the engine allows: an SQS
 * visibility timeout, a JetStream `ack_wait`, against the receiver's `leaseMs` (worker-checks.ts).
 */
import type { HandoffRunner } from './job/types.js';
import { leaseAllows, optionsInvalid } from './worker-checks.js';

/**
 * Throws `options_invalid` unless the handler budget (`timeoutMs`, or the receiver's default
 * `leaseMs` − 1 s) stays below the receiver's `leaseMs` and below `limitMs`, the time the engine
 * keeps a job from other workers (`limitName` says which setting that is).
 */
export function checkHandlerBudget(
  factory: string,
  receiver: HandoffRunner,
  settings: { timeoutMs: number | undefined; limitMs: number; limitName: string },
): void {
  const { timeoutMs, limitMs, limitName } = settings;
  if (timeoutMs !== undefined) {
    if (leaseAllows(receiver, timeoutMs) === false)
      throw optionsInvalid(factory, `timeoutMs (${timeoutMs}) must stay below the receiver's leaseMs.`);
    if (timeoutMs >= limitMs)
      throw optionsInvalid(factory, `${limitName} (${limitMs} ms) must outlast timeoutMs (${timeoutMs}).`);
    return;
  }
  // The default budget is leaseMs − 1 s: it reaches limitMs when leaseMs ≥ limitMs + 1 000, that
  // is when a budget of limitMs + 999 is still allowed.
  if (leaseAllows(receiver, limitMs + 999) === true)
    throw optionsInvalid(
      factory,
      `${limitName} (${limitMs} ms) must outlast the handlers' time budget (the receiver's leaseMs − 1 s): raise it, or pass a smaller timeoutMs.`,
    );
}
