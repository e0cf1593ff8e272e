/**
 * Checks shared by the hand-off workers: a misconfigured worker throws `options_invalid` when it is
 * created or started, instead of failing every job it takes (and dead-lettering them). The handler
 * budget is checked against what the engine allows: an SQS visibility timeout, a JetStream
 * `ack_wait`, and the receiver's `leaseMs`.
 */

import { WebhookError } from '../shared/errors.js';
import type { HandoffRunner } from './job/types.js';

/** `options_invalid`, prefixed with the factory's name. */
export function optionsInvalid(factory: string, message: string): WebhookError {
  return new WebhookError('options_invalid', `${factory}: ${message}`);
}

/** `receiver` when it can run jobs (a receiver of this library); else `options_invalid`. */
export function checkRunner(factory: string, receiver: unknown): HandoffRunner {
  const candidate = receiver as Partial<HandoffRunner> | null | undefined;
  if (typeof candidate?.runJob !== 'function' || typeof candidate.reportJobError !== 'function')
    throw optionsInvalid(
      factory,
      'pass the receiver whose handlers run the jobs (createMailReceiver / createCrmReceiver).',
    );
  return candidate as HandoffRunner;
}

/** `value` when it is a whole number ≥ 1; else `options_invalid`. */
export function positiveInteger(factory: string, name: string, value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw optionsInvalid(factory, `${name} must be a positive whole number (got ${String(value)}).`);
  return value as number;
}

/** Checks each of `numbers` given (an undefined one is left to its default) with {@link positiveInteger}. */
export function positiveIntegers(factory: string, numbers: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(numbers))
    if (value !== undefined) positiveInteger(factory, name, value);
}

/** `value` when it is a list of signal names; else `options_invalid`. */
export function signalNames(factory: string, name: string, value: unknown): readonly NodeJS.Signals[] {
  if (
    !Array.isArray(value) ||
    !value.every((signal) => typeof signal === 'string' && signal.startsWith('SIG'))
  )
    throw optionsInvalid(factory, `${name} must be a list of signal names such as ['SIGTERM'].`);
  return value as NodeJS.Signals[];
}

/**
 * Whether the handler budget `timeoutMs` fits the receiver's lease: it must be below `leaseMs`, so
 * the claim outlives every run. Undefined for a runner that states no lease (it then accepts any).
 */
export function leaseAllows(receiver: HandoffRunner, timeoutMs: number): boolean | undefined {
  const { leaseMs } = receiver;
  return typeof leaseMs === 'number' ? timeoutMs < leaseMs : undefined;
}

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
