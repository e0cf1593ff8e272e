/**
 * What every command prints: human text (colours only on a TTY, never with NO_COLOR) or one JSON
 * document with `--json`, and a progress bar on stderr for long work when stderr is a TTY.
 */
import { EXIT, type ExitCode } from './exit-codes.js';
import { jsonText, terminalSafe } from './visible-text.js';

/** The global output options every command receives. */
export interface Output {
  json: boolean;
  /**
   * Human text to stdout (ignored with `--json`). Untrusted parts go through {@link visible} first;
   * any control character left but `\n`, `\t` and the colours is escaped here too.
   */
  line(text?: string): void;
  /** The JSON result to stdout (only with `--json`). */
  result(value: unknown): void;
  /** Notes to stderr (never part of the result; kept with `--json` too). */
  note(text: string): void;
  color: Colors;
  /** A progress bar over `total` steps on a TTY stderr; a no-op elsewhere. */
  progress(label: string, total: number): Progress;
}

/** Colour helpers; identity functions when colours are off. */
export interface Colors {
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

/** A progress bar. */
export interface Progress {
  tick(step?: number): void;
  done(): void;
}

const wrap = (on: boolean, open: number, close: number) => (text: string) =>
  on ? `\u001b[${open}m${text}\u001b[${close}m` : text;

/** Colours for a stream: on only for a TTY, off with NO_COLOR set (https://no-color.org), on with FORCE_COLOR. */
export function colorsFor(stream: NodeJS.WriteStream, env = process.env): Colors {
  const on =
    env.NO_COLOR === undefined || env.NO_COLOR === ''
      ? Boolean(stream.isTTY) || (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0')
      : false;
  return {
    green: wrap(on, 32, 39),
    red: wrap(on, 31, 39),
    yellow: wrap(on, 33, 39),
    dim: wrap(on, 2, 22),
    bold: wrap(on, 1, 22),
  };
}

/** The output of one command run. */
export function createOutput(json: boolean): Output {
  const stdout = process.stdout;
  const stderr = process.stderr;
  return {
    json,
    line(text = '') {
      if (!json) stdout.write(`${terminalSafe(text)}\n`);
    },
    result(value) {
      if (json) stdout.write(`${jsonText(value, 2)}\n`);
    },
    note(text) {
      stderr.write(`${terminalSafe(text)}\n`);
    },
    color: colorsFor(stdout),
    progress(label, total) {
      if (!stderr.isTTY || total <= 1) return { tick() {}, done() {} };
      let count = 0;
      const draw = () => {
        const width = 30;
        const filled = Math.round((count / total) * width);
        stderr.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${count}/${total}`);
      };
      draw();
      return {
        tick(step = 1) {
          count = Math.min(total, count + step);
          draw();
        },
        done() {
          stderr.write('\r\u001b[2K');
        },
      };
    },
  };
}

/** The exit code for a failed `fetch`: refused, unreachable and timed-out URLs are network failures. */
export function describeFetchError(error: unknown): { message: string; exitCode: ExitCode } {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const name = (error as { name?: string })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return { message: 'no answer within the time limit', exitCode: EXIT.unreachable };
  }
  const detail = cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
  return { message: `could not connect (${detail})`, exitCode: EXIT.unreachable };
}
