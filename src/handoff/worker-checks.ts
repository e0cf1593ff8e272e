/**
 * Checks shared by the hand-off workers: a misconfigured worker throws `options_invalid` when it is
 * created or started, instead of failing every job it takes (and dead-lettering them).
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
