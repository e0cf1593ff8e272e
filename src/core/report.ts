/**
 * Reporting failures to the user's `onError` hooks and logger. Neither may change the response:
 * what a hook throws (or rejects with) is logged and dropped.
 */
import type { ErrorFacts, ErrorHook, ErrorInfo, ErrorPhase } from './handler-types.js';
import { emit, errField, type LogFields, type LogLevel, type LogSink } from './logger.js';

/** Where and on what a failure happened; `error` is added to it for the hooks. */
export type ReportInfo<E> = ErrorFacts<E> & { phase: ErrorPhase };

/**
 * Sends `error` to every hook and one log entry at `level`. Hooks are called, never awaited: what
 * they return or throw cannot hold the answer (a slow `onError` must not outlive the deadline).
 * Phases `timeout` and `invalid` must carry a `WebhookError` (the {@link ErrorInfo} contract).
 */
export function report<E>(
  hooks: readonly ErrorHook<E>[],
  logger: LogSink | undefined,
  level: LogLevel,
  message: string,
  fields: LogFields,
  error: unknown,
  facts: ReportInfo<E>,
): void {
  if (logger) emit(logger, level, message, { ...fields, phase: facts.phase, err: errField(error) });
  if (hooks.length === 0) return;
  const info = { ...facts, error } as ErrorInfo<E>;
  for (const hook of hooks) {
    try {
      // A hook's promise (or any value) is never awaited; only its rejection is logged.
      Promise.resolve(hook(error, info)).then(undefined, (hookError: unknown) =>
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
