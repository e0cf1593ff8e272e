/**
 * The `logger` option turned into the one function the pipeline calls ({@link LogSink}): a function
 * as it is; `console`, winston, pino, bunyan and any object with `debug/info/warn/error` in the
 * calling convention each of them documents; the console (warnings and errors only) when the option
 * is absent; nothing for `false`.
 */
import { escapeInJson } from '../shared/control-chars.js';
import { WebhookError } from '../shared/errors.js';
import type { LogEntry, LogFields, Logger, LogLevel, LogSink } from './logger.js';

type Method = (...args: unknown[]) => unknown;
type LevelLogger = Record<LogLevel, Method> & Record<string, unknown>;

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

function sink(write: (entry: LogEntry) => void, verbose: boolean): LogSink {
  return Object.assign((entry: LogEntry) => write(entry), { verbose });
}

// A value written as is in a console line, else quoted as JSON, with the controls JSON leaves (C1,
// U+2028/U+2029, bidi) escaped too: a header value must not reach a terminal raw.
const PLAIN = /^[\w.:/@+-]{1,200}$/;

/** How many kinds of failure the default console remembers having printed the stack of. */
const STACK_KINDS = 256;

/**
 * One console line: `@svc/webhooks WARN <message> key=value …`; an `Error` under `err` is passed
 * after it, so the console prints its stack (and `cause`) below the line. With `printed` (the
 * default console), a stack is printed once per kind of failure (level, error name, code and
 * message; not the entry's message, which names the delivery or job): a failure that repeats on every
 * attempt or every delivery (a planned outage, jobs retried while another attempt runs) is one line
 * each time after the first, naming the error and saying the stack was printed.
 */
function writeConsole(target: () => Record<LogLevel, Method>, entry: LogEntry, printed?: Set<string>): void {
  const { level, message, fields } = entry;
  let line = `@svc/webhooks ${level.toUpperCase()} ${message}`;
  let error: Error | undefined;
  for (const name in fields) {
    const value = fields[name];
    if (value === undefined) continue;
    if (name === 'err' && value instanceof Error) {
      error = value;
      continue;
    }
    const text = String(value);
    line += ` ${name}=${PLAIN.test(text) ? text : escapeInJson(JSON.stringify(text))}`;
  }
  const console = target();
  if (error && printed) {
    const code = (error as { code?: unknown }).code;
    const kind = `${level}\0${error.name}\0${typeof code === 'string' ? code : ''}\0${error.message}`;
    if (printed.has(kind) || printed.size >= STACK_KINDS) {
      const text = `${error.name}: ${error.message}`.slice(0, 500);
      const why = printed.has(kind) ? 'printed the first time' : `not printed past ${STACK_KINDS} kinds`;
      line += ` err=${escapeInJson(JSON.stringify(text))} (stack ${why})`;
      error = undefined;
    } else printed.add(kind);
  }
  if (error) console[level](line, error);
  else console[level](line);
}

/**
 * winston: its level methods take `(message, meta)` and read `%` in the message as format tokens, so
 * the entry goes as one info object through `log()`; an `Error` becomes `stack` (with its causes), the
 * key winston itself uses for an error's stack (its `errors()` format and its Error-as-meta handling),
 * since an `Error` under any other key serializes as `{}`.
 */
function writeWinston(logger: LevelLogger, entry: LogEntry): void {
  const { level, message, fields } = entry;
  const { err, ...rest } = fields;
  const info: Record<string, unknown> = { ...rest, level, message };
  if (err instanceof Error) info.stack = stackWithCauses(err);
  else if (err !== undefined) info.err = err;
  (logger.log as Method).call(logger, info);
}

function stackWithCauses(error: Error): string {
  let text = error.stack ?? String(error);
  let cause = error.cause;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++) {
    text += `\ncaused by: ${cause.stack ?? String(cause)}`;
    cause = cause.cause;
  }
  return text;
}

function isConsole(logger: LevelLogger): boolean {
  return (
    logger === (globalThis.console as unknown) ||
    (typeof logger.table === 'function' &&
      typeof logger.group === 'function' &&
      typeof logger.dir === 'function')
  );
}

function isWinston(logger: LevelLogger): boolean {
  return typeof logger.log === 'function' && typeof logger.add === 'function' && 'transports' in logger;
}

/** The console at the time of the call (so a test's spy or an app's patched console sees it). */
const currentConsole = () => globalThis.console as unknown as Record<LogLevel, Method>;

/** The default: warnings and errors on the console, one line each, a kind of failure's stack once. */
const defaultSink = (): LogSink => {
  const printed = new Set<string>(); // per receiver: a process may hold several apps' receivers
  return sink((entry) => writeConsole(currentConsole, entry, printed), false);
};

/**
 * The {@link LogSink} of the `logger` option, or undefined for `false`; `options_invalid` for
 * anything that is not a function or an object with the four level methods.
 */
export function toLogSink(factory: string, logger: Logger | false | undefined): LogSink | undefined {
  if (logger === undefined) return defaultSink();
  if (logger === false) return undefined;
  if (typeof logger === 'function') return sink((entry) => logger(entry), true);
  const methods = logger as unknown as LevelLogger | null;
  if (
    typeof methods !== 'object' ||
    methods === null ||
    LEVELS.some((l) => typeof methods[l] !== 'function')
  ) {
    throw new WebhookError(
      'options_invalid',
      `${factory}: logger must be a function receiving { level, message, fields }, an object with debug, info, warn and error methods (pino, winston, bunyan, console), or false.`,
    );
  }
  if (isConsole(methods)) return sink((entry) => writeConsole(() => methods, entry), true);
  if (isWinston(methods)) return sink((entry) => writeWinston(methods, entry), true);
  // pino, bunyan and the like: the merging object first, then the message.
  return sink(({ level, message, fields }: { level: LogLevel; message: string; fields: LogFields }) => {
    methods[level].call(methods, fields, message);
  }, true);
}
