/**
 * Every command's action runs through {@link runAction}: it builds the output (`--json` or text),
 * turns a thrown error into its message, `fix` and exit code, and sets `process.exitCode`.
 */
import type { Command } from 'commander';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';
import { createOutput, type Output } from './output.js';
import { visible } from './visible-text.js';

/** An action: the output first, then the command's arguments and options. */
export type Action = (out: Output, ...args: never[]) => Promise<ExitCode>;

/** Adds `--json` to a command (every command has it, shown in its `--help`). */
export function withJson(command: Command): Command {
  return command.option('--json', 'print one JSON document instead of text');
}

/** Wraps an action for commander. */
export function runAction(action: Action): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const { json = false } = command.opts() as { json?: boolean };
    const out = createOutput(json);
    try {
      process.exitCode = await (action as (out: Output, ...rest: unknown[]) => Promise<ExitCode>)(
        out,
        ...args.slice(0, -1),
      );
    } catch (error) {
      process.exitCode = reportError(out, error);
    }
  };
}

/** Prints an error (text to stderr, or `{ ok: false, error }` with `--json`) and returns its exit code. */
export function reportError(out: Output, error: unknown): ExitCode {
  const known = error instanceof CliError;
  const code = known ? error.code : 'internal_error';
  const message = error instanceof Error ? error.message : String(error);
  const fix = known ? error.fix : undefined;
  const exitCode = known ? error.exitCode : EXIT.failed;
  if (out.json) {
    out.result({ ok: false, error: { code, message, ...(fix ? { fix } : {}) } });
  } else {
    // Messages can carry a server's text or a file's name: shown with their controls escaped.
    out.note(`${out.color.red('error')} ${visible(message)}`);
    if (fix) out.note(`  fix: ${visible(fix)}`);
  }
  return exitCode;
}
