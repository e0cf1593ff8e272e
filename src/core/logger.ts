/**
 * The receivers' structured logging hook. One function receives every entry; wire it to pino,
 * winston or `console` in one line. Entries never carry a secret, a signature or a body.
 */
import { truncateUntrusted } from './untrusted.js';

/**
 * Severity of a {@link LogEntry}: `debug` (processed, ignored, duplicate), `info` (in progress
 * elsewhere, late finish), `warn` (refused requests, timeouts, store write failures), `error`
 * (handler exceptions, store unreachable, bugs).
 *
 * @example
 * ```ts
 * const logger: Logger = ({ level, message, fields }) => level !== 'debug' && console[level](message, fields);
 * ```
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Structured fields of a {@link LogEntry}: flat, JSON-friendly values only.
 *
 * @example
 * ```ts
 * const fields: LogFields = { service: 'mail', deliveryId: 'd_1', event: 'bounced' };
 * ```
 */
export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * One log line of a receiver.
 *
 * @example
 * ```ts
 * const entry: LogEntry = { level: 'error', message: 'webhook handler threw', fields: { service: 'crm', phase: 'handler' } };
 * ```
 */
export interface LogEntry {
  level: LogLevel;
  message: string;
  /**
   * Always `service`; then `deliveryId`, `event`, `key`, `code`, `status`, `error`… as known.
   * `deliveryId`, `event` and `key` can come from unsigned headers, so they are cut to 128 characters
   * plus `…(+N chars)` (see `truncateUntrusted`).
   */
  fields: LogFields;
}

/**
 * A receiver's logging hook.
 *
 * @example
 * ```ts
 * import pino from 'pino';
 * import { createMailReceiver, type Logger } from '@svc/webhooks';
 *
 * const log = pino();
 * const logger: Logger = ({ level, message, fields }) => log[level](fields, message);
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, logger });
 * ```
 */
export type Logger = (entry: LogEntry) => void;

/**
 * The logger handlers get in their context: the receiver's logger with the delivery's fields
 * (`service`, `deliveryId`, `event`, `key`) added to every entry.
 *
 * @example
 * ```ts
 * receiver.on('bounced', async (event, { log }) => {
 *   log.info('suppressing recipient', { to: event.payload.to });
 * });
 * ```
 */
export interface HandlerLog {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const noop = (): void => {};

/** The log of handlers when the receiver has no logger: allocation-free. */
export const silentLog: HandlerLog = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

// The fields whose values a sender chooses (header values, or keys built from them): bounded in every
// entry, so a 15 KB `X-SvcMAIL-Id` cannot make a 15 KB log line.
const UNTRUSTED_FIELDS = ['deliveryId', 'event', 'key'] as const;

function bounded(fields: LogFields): LogFields {
  let copy: Record<string, string | number | boolean | undefined> | undefined;
  for (const name of UNTRUSTED_FIELDS) {
    const value = fields[name];
    if (typeof value !== 'string') continue;
    const cut = truncateUntrusted(value);
    if (cut === value) continue;
    copy ??= { ...fields };
    copy[name] = cut;
  }
  return copy ?? fields;
}

/**
 * Calls `logger` and swallows what it throws: a broken logger must never change a response. Untrusted
 * fields (`deliveryId`, `event`, `key`) are truncated first.
 */
export function emit(logger: Logger | undefined, level: LogLevel, message: string, fields: LogFields): void {
  if (!logger) return;
  try {
    logger({ level, message, fields: bounded(fields) });
  } catch {
    // Logging is best effort.
  }
}

/** A {@link HandlerLog} that adds `base` to every entry's fields. */
export function bindLog(logger: Logger | undefined, base: LogFields): HandlerLog {
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
