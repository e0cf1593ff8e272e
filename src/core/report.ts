/**
 * Reporting failures to the user's `onError` hooks and logger. Neither may change the response:
 * what a hook throws (or rejects with) is logged and dropped.
 */
import type { ErrorHook, ErrorInfo } from './handler-types.js';
import { describeError, emit, type LogFields, type Logger, type LogLevel } from './logger.js';

/** Sends `error` to every hook and one log entry at `level`. */
export function report<E>(
  hooks: readonly ErrorHook<E>[],
  logger: Logger | undefined,
  level: LogLevel,
  message: string,
  fields: LogFields,
  error: unknown,
  info: ErrorInfo<E>,
): void {
  emit(logger, level, message, { ...fields, phase: info.phase, error: describeError(error) });
  for (const hook of hooks) {
    try {
      const returned = hook(error, info);
      if (returned instanceof Promise)
        returned.catch((hookError: unknown) => hookFailed(logger, fields, hookError));
    } catch (hookError) {
      hookFailed(logger, fields, hookError);
    }
  }
}

function hookFailed(logger: Logger | undefined, fields: LogFields, error: unknown): void {
  emit(logger, 'error', 'onError hook threw', { ...fields, error: describeError(error) });
}
