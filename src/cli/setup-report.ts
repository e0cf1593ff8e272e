/**
 * What `svc-webhooks setup` prints and how its failures exit: one line per stream or queue, and a
 * refusal from the library with its options said as the command's flags.
 */
import type { EnsuredResource } from '../handoff/ensure.js';
import { isWebhookError } from '../shared/errors.js';
import { CliError, EXIT } from './exit-codes.js';
import type { Output } from './output.js';

/** Failures that mean the server was not reached, not that it refused. */
const UNREACHABLE =
  /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ECONNRESET|TIMEOUT|connection[ _]refused/i;

/** The library's options in a refusal, as this command's flags. */
const FLAGS: [RegExp, string][] = [
  [/duplicateWindowMs: (\d+)/g, '--duplicate-window $1ms'],
  [/maxAgeMs: (\d+)/g, '--max-age $1ms'],
  [/replicas: (\d+)/g, '--replicas $1'],
  [/visibilityTimeoutSeconds: (\d+)/g, '--visibility-timeout $1'],
  [/maxReceiveCount: (\d+)/g, '--max-receive-count $1'],
  [/retentionSeconds: (\d+)/g, '--retention $1s'],
  [/maxMessageBytes: (\d+)/g, '--max-message-size $1'],
  [/deadLetterQueueName: '([^']*)'/g, '--dead-letter-queue $1'],
  [/pass update: true \(svc-webhooks setup … --update\)/g, 'add --update'],
];
const asFlags = (message: string) =>
  FLAGS.reduce((text, [option, flag]) => text.replace(option, flag), message);

/** A library or engine failure as the command's exit: differing settings 1, bad options 2, no server 3. */
export function failure(error: unknown, target: string): unknown {
  if (isWebhookError(error) && error.code === 'options_invalid')
    // "exists with other settings" is the refusal of an existing resource; anything else is an option.
    return new CliError(
      asFlags(error.message),
      /exists with other settings/.test(error.message) ? EXIT.failed : EXIT.usage,
      error.code,
    );
  if (error instanceof CliError) return error;
  const text = `${(error as { code?: unknown })?.code ?? ''} ${(error as Error)?.name ?? ''} ${(error as Error)?.message ?? ''}`;
  if (UNREACHABLE.test(text))
    return new CliError(
      `${target} did not answer: ${(error as Error).message}`,
      EXIT.unreachable,
      'server_unavailable',
    );
  return new CliError(
    `${target} failed: ${(error as Error)?.message ?? String(error)}`,
    EXIT.failed,
    'setup_failed',
  );
}

export function print(out: Output, rows: [kind: string, resource: EnsuredResource, url?: string][]): void {
  for (const [kind, { name, outcome, changed }, url] of rows) {
    const color = outcome === 'unchanged' ? out.color.dim : out.color.green;
    const detail = changed.length > 0 ? ` (${changed.join(', ')})` : '';
    out.line(`${kind} ${name}: ${color(outcome)}${detail}${url ? `  ${url}` : ''}`);
  }
}
