/**
 * The handler budget a worker runs jobs with, checked against what the engine allows: an SQS
 * visibility timeout, a JetStream `ack_wait`. One place reads the receiver's lease, so a receiver that
 * states `leaseMs` is read directly and one that does not is asked through `runJob` (worker-checks.ts).
 */
import type { HandoffRunner } from './job/types.js';
import { leaseAllows, optionsInvalid } from './worker-checks.js';

/** The receiver's `leaseMs` when it states one, else undefined. */
function statedLeaseMs(receiver: HandoffRunner): number | undefined {
  const leaseMs = (receiver as { leaseMs?: unknown }).leaseMs;
  return typeof leaseMs === 'number' && Number.isFinite(leaseMs) && leaseMs > 0 ? leaseMs : undefined;
}

/** Whether `runJob` accepts the budget `timeoutMs` (below `leaseMs`); undefined when it checks none. */
async function allows(receiver: HandoffRunner, timeoutMs: number): Promise<boolean | undefined> {
  const leaseMs = statedLeaseMs(receiver);
  return leaseMs === undefined ? leaseAllows(receiver, timeoutMs) : timeoutMs < leaseMs;
}

/**
 * Throws `options_invalid` unless the handler budget (`timeoutMs`, or the receiver's default
 * `leaseMs` − 1 s) stays below the receiver's `leaseMs` and below `limitMs`, the time the engine
 * keeps a job from other workers (`limitName` says which setting that is).
 */
export async function checkHandlerBudget(
  factory: string,
  receiver: HandoffRunner,
  settings: { timeoutMs: number | undefined; limitMs: number; limitName: string },
): Promise<void> {
  const { timeoutMs, limitMs, limitName } = settings;
  if (timeoutMs !== undefined) {
    if ((await allows(receiver, timeoutMs)) === false)
      throw optionsInvalid(factory, `timeoutMs (${timeoutMs}) must stay below the receiver's leaseMs.`);
    if (timeoutMs >= limitMs)
      throw optionsInvalid(factory, `${limitName} (${limitMs} ms) must outlast timeoutMs (${timeoutMs}).`);
    return;
  }
  // The default budget is leaseMs − 1 s: it reaches limitMs when leaseMs ≥ limitMs + 1 000, that
  // is when a budget of limitMs + 999 is still allowed.
  if ((await allows(receiver, limitMs + 999)) === true)
    throw optionsInvalid(
      factory,
      `${limitName} (${limitMs} ms) must outlast the handlers' time budget (the receiver's leaseMs − 1 s): raise it, or pass a smaller timeoutMs.`,
    );
}
