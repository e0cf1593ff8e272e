/**
 * The receivers' structured logging: the entry every logger gets, the `logger` option's forms, and
 * the calls the pipeline makes. Entries never carry a secret, a signature or a body; the error an
 * entry is about travels as the original `Error` under `err`, so a logger's serializer keeps its stack.
 */
import { isRetryable, isWebhookError, WebhookError } from '../shared/errors.js';
import { truncateUntrusted, UNTRUSTED_LOG_CHARS } from './untrusted.js';

/**
 * Severity of a {@link LogEntry}: `debug` (processed, ignored, duplicate), `info` (in progress
 * elsewhere, late finish), `warn` (refused requests, timeouts, store write failures), `error`
 * (handler exceptions, store unreachable, bugs).
 *
 * @example
 * ```ts
 * const logger: Logger = ({ level, message, fields }) => level !== 'debug' && console[level](message, fields);
 * ```
 *
 * @example
 * ```ts
 * import type { LogLevel } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: LogLevel): LogLevel {
 *   return value;
 * }
 * ```
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Structured fields of a {@link LogEntry}: flat values, and the `Error` an entry is about under `err`.
 *
 * @example
 * ```ts
 * const fields: LogFields = { service: 'mail', deliveryId: 'd_1', event: 'bounced', err: new Error('db down') };
 * ```
 *
 * @example
 * ```ts
 * import type { LogFields } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: LogFields): LogFields {
 *   return value;
 * }
 * ```
 */
export type LogFields = Readonly<Record<string, string | number | boolean | Error | undefined>>;

/**
 * One log line of a receiver.
 *
 * @example
 * ```ts
 * const entry: LogEntry = { level: 'error', message: 'webhook handler threw', fields: { service: 'crm', phase: 'handler', err: new Error('db down') } };
 * ```
 */
export interface LogEntry {
  level: LogLevel;
  message: string;
  /**
   * Always `service`; then `deliveryId`, `event`, `dedupKey`, `code`, `phase`… as known, and `err`:
   * the error the entry is about, as thrown (a handler's own `Error` with its stack and `cause`), or a
   * description of a thrown value that is not an `Error`. `deliveryId`, `event` and `dedupKey` can
   * come from unsigned headers, so they are cut to 128 characters plus `…(+N chars)`.
   */
  fields: LogFields;
}

/**
 * Where a receiver's log entries go (option `logger`): a function receiving each {@link LogEntry}, or
 * a logger object with `debug`, `info`, `warn` and `error` methods, as it is: pino and bunyan are
 * called `log.warn(fields, message)`, winston `log.log({ level, message, ...fields })` with the error's
 * stack under `stack`, and `console` with one line per entry. Without it, warnings and errors go to
 * the console; `false` silences the receiver (docs/observability.md).
 *
 * @example
 * ```ts
 * import pino from 'pino';
 * import { createMailReceiver } from '@svc/webhooks';
 *
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, logger: pino() });
 * ```
 */
export type Logger =
  | ((entry: LogEntry) => void)
  | {
      debug(...args: never[]): unknown;
      info(...args: never[]): unknown;
      warn(...args: never[]): unknown;
      error(...args: never[]): unknown;
    };

/**
 * The logger handlers get in their context: the receiver's logger with the delivery's fields
 * (`service`, `deliveryId`, `event`, `dedupKey`) added to every entry.
 *
 * @example
 * ```ts
 * receiver.on('bounced', async (event, { log }) => {
 *   log.info('suppressing recipient', { to: event.payload.to });
 * });
 * ```
 *
 * @example
 * ```ts
 * import type { HandlerLog } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: HandlerLog): HandlerLog {
 *   return value;
 * }
 * ```
 */
export interface HandlerLog {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/**
 * A receiver's logger as the pipeline calls it (log-sink.ts builds it from the option): one function
 * for every entry, and whether `debug` and `info` entries are wanted at all. The default console
 * logger wants neither, so the hot path builds no entry for them (`if (logger?.verbose)`).
 */
export interface LogSink {
  (entry: LogEntry): void;
  readonly verbose: boolean;
}

const noop = (): void => {};

/** The log of handlers when the receiver has no logger: allocation-free. */
export const silentLog: HandlerLog = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

// The fields whose values a sender chooses (header values, or keys built from them): bounded in every
// entry, so a 15 KB `X-SvcMAIL-Id` cannot make a 15 KB log line.
const UNTRUSTED_FIELDS = ['deliveryId', 'event', 'dedupKey'] as const;

function bounded(fields: LogFields): LogFields {
  let copy: Record<string, string | number | boolean | Error | undefined> | undefined;
  for (const name of UNTRUSTED_FIELDS) {
    const value = fields[name];
    // Checked here: nearly every value is short, and then nothing is called.
    if (typeof value !== 'string' || value.length <= UNTRUSTED_LOG_CHARS) continue;
    const cut = truncateUntrusted(value);
    if (cut === value) continue;
    copy ??= { ...fields };
    copy[name] = cut;
  }
  return copy ?? fields;
}

/**
 * Calls `logger` and swallows what it throws: a broken logger must never change a response. Untrusted
 * fields (`deliveryId`, `event`, `dedupKey`) are truncated first; `debug` and `info` entries reach a
 * logger that is not `verbose` (the default console one) not at all.
 */
export function emit(logger: LogSink | undefined, level: LogLevel, message: string, fields: LogFields): void {
  if (!logger || (!logger.verbose && (level === 'debug' || level === 'info'))) return;
  try {
    logger({ level, message, fields: bounded(fields) });
  } catch {
    // Logging is best effort.
  }
}

/** A {@link HandlerLog} that adds `base` to every entry's fields. */
export function bindLog(logger: LogSink | undefined, base: LogFields): HandlerLog {
  if (!logger) return silentLog;
  const at =
    (level: LogLevel) =>
    (message: string, fields?: LogFields): void =>
      emit(logger, level, message, fields ? { ...base, ...fields } : base);
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A loggable description of a thrown value: its name and message, never its stack or properties. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : `non-Error value (${typeof error})`;
}

/**
 * The `err` field of an entry about `error`: the `Error` itself (its stack and `cause` are what a
 * logger's serializer shows), or a description of a thrown value that is not one (never the value:
 * it may be anything). The library's own refusals (`invalid_json`, `invalid_payload`, …, and a
 * worker's `job_invalid`: any code that is not retryable) go without their `cause`: JSON's and zod's
 * messages quote the body, which never reaches a log line.
 */
export function errField(error: unknown): Error | string {
  if (!(error instanceof Error)) return describeError(error);
  if (!isWebhookError(error) || error.cause === undefined) return error;
  if (isRetryable(error.code)) return error;
  const bare = new WebhookError(error.code, error.message, { status: error.status });
  if (error.stack !== undefined) bare.stack = error.stack;
  return bare;
}
