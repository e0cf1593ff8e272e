/**
 * The exit codes of `svc-webhooks` (docs/cli.md "Exit codes"). Scripts branch on them, so they never
 * change meaning within a major version.
 */
export const EXIT = {
  /** Everything worked: every delivery answered 2xx, the signature matched, the server stopped cleanly. */
  ok: 0,
  /** The command ran but the outcome is a failure: a non-2xx answer, a signature that does not match. */
  failed: 1,
  /** Bad usage or input: a missing secret, an unknown event, an unreadable or malformed file. */
  usage: 2,
  /** The network: a URL that refuses the connection, times out or cannot be resolved. */
  unreachable: 3,
} as const;

/** One of {@link EXIT}'s values. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error that ends the command with `exitCode` and a one-line `message` (plus an optional `fix`). */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.usage,
    readonly code = 'usage',
    readonly fix?: string,
  ) {
    super(message);
  }
}
