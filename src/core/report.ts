/**
 * Reporting failures to the user's `onError` hooks and logger. Neither may change the response:
 * what a hook throws (or rejects with) is logged and dropped.
 */
import type { ErrorHook, ErrorInfo, ErrorPhase } from './handler-types.js';
import { emit, errField, type LogFields, type LogLevel, type LogSink } from './logger.js';

/** Where failures go: a receiver's `onError` hooks and its logger. */
export interface Reporter<E> {
  readonly hooks: readonly ErrorHook<E>[];
  readonly logger: LogSink | undefined;
}

/** One failure to report: the log entry (`level`, `message`, `fields`) and what the hooks get. */
export interface Failure<E> extends Omit<ErrorInfo<E>, 'phase' | 'error'> {
  readonly level: LogLevel;
  readonly message: string;
  readonly fields: LogFields;
  readonly error: unknown;
  readonly phase: ErrorPhase;
}

/**
 * Sends `failure.error` to every hook and one log entry at `failure.level`. Hooks are called, never
 * awaited: what they return or throw cannot hold the answer (a slow `onError` must not outlive the
 * deadline). Phases `timeout` and `invalid` must carry a `WebhookError` (the {@link ErrorInfo} contract).
 */
export function report<E>(to: Reporter<E>, failure: Failure<E>): void {
  const { hooks, logger } = to;
  const { fields, error, phase } = failure;
  if (logger) emit(logger, failure.level, failure.message, { ...fields, phase, err: errField(error) });
  if (hooks.length === 0) return;
  const info = { phase } as Omit<ErrorInfo<E>, 'phase' | 'error'> & { phase: ErrorPhase; error: unknown };
  if (failure.event !== undefined) info.event = failure.event;
  if (failure.deliveryId !== undefined) info.deliveryId = failure.deliveryId;
  if (failure.dedupKey !== undefined) info.dedupKey = failure.dedupKey;
  if (failure.body !== undefined) info.body = failure.body;
  info.error = error;
  for (const hook of hooks) {
    try {
      // A hook's promise (or any value) is never awaited; only its rejection is logged.
      Promise.resolve(hook(error, info as ErrorInfo<E>)).then(undefined, (hookError: unknown) =>
        hookFailed(logger, fields, hookError),
      );
    } catch (hookError) {
      hookFailed(logger, fields, hookError);
    }
  }
}

function hookFailed(logger: LogSink | undefined, fields: LogFields, error: unknown): void {
  emit(logger, 'error', 'onError hook threw', { ...fields, err: errField(error) });
}
