/**
 * `svc-webhooks inbox serve`: the inbox page on 127.0.0.1 against the target the other `inbox`
 * subcommands take. The target is checked once before listening (a missing table or an unreachable
 * database fails the command, as `inbox list` does); afterwards a failure answers the page's call
 * with its code and a message scrubbed of the URL's password, and the server keeps running.
 */
import type { HandoffRunner } from '../../handoff/job/types.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import { databaseError, openInbox, type TargetOptions } from '../inbox-target.js';
import { loadReceivers } from '../load-receiver.js';
import type { Output } from '../output.js';
import { jsonText } from '../visible-text.js';
import { startInboxPage } from './server.js';

/** The inbox page's default port (the emulator's is 4400); `--port 0` picks a free one. */
export const DEFAULT_INBOX_PAGE_PORT = 4401;

/** Runs the page until SIGINT or SIGTERM. */
export async function serveInbox(
  out: Output,
  options: TargetOptions & { port: string; receiver?: string[] },
): Promise<ExitCode> {
  const port = Number(options.port);
  if (!/^\d{1,5}$/.test(options.port) || port > 65_535)
    throw new CliError(`--port must be 0 to 65535 (got ${options.port}).`);
  const loaded = options.receiver?.length ? await loadReceivers(options.receiver) : undefined;
  try {
    return await serve(out, options, port, loaded?.receivers ?? []);
  } finally {
    await loaded?.close();
  }
}

async function serve(
  out: Output,
  options: TargetOptions,
  port: number,
  receivers: readonly HandoffRunner[],
): Promise<ExitCode> {
  const target = await openInbox(options);
  try {
    await target.inbox.list({ limit: 1 });
  } catch (error) {
    await target.close().catch(() => {});
    throw databaseError(error, target, options);
  }
  const failure = (error: unknown) => {
    const mapped = databaseError(error, target, options);
    if (mapped instanceof CliError)
      return {
        status: mapped.exitCode === EXIT.unreachable ? 503 : 500,
        code: mapped.code,
        message: mapped.message,
      };
    return { status: 500, code: 'internal_error', message: 'The inbox page failed; see its output.' };
  };
  let page: Awaited<ReturnType<typeof startInboxPage>>;
  try {
    page = await startInboxPage({ inbox: target.inbox, label: target.label, failure, receivers }, port);
  } catch (error) {
    await target.close().catch(() => {});
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      `Cannot listen on 127.0.0.1:${port} (${code ?? String(error)}).`,
      EXIT.unreachable,
      'listen_failed',
      code === 'EADDRINUSE' ? 'Another process uses the port: pass --port 0 or another port.' : undefined,
    );
  }
  if (out.json)
    process.stdout.write(
      `${jsonText({ type: 'listening', url: page.url, port: page.port, target: target.label })}\n`,
    );
  else {
    out.line(`${out.color.bold('svc-webhooks inbox')} on ${page.url}`);
    out.line(`  target  ${target.label}`);
    out.line(out.color.dim('  Ctrl-C stops it.'));
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await page.close();
  await target.close().catch(() => {});
  return EXIT.ok;
}
