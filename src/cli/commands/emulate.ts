/** `svc-webhooks emulate [--port P] [--speed X]`: both services as a local HTTP server with a live page. */
import type { Command } from 'commander';
import type { EmitterReport } from '../../testing/emitter/types.js';
import { createScaledClock } from '../emulate/scaled-clock.js';
import { startEmulatorServer } from '../emulate/server.js';
import { createEmulatorState, realDuration } from '../emulate/state.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import type { Output } from '../output.js';
import { runAction, withJson } from '../run-action.js';
import { jsonText, visible } from '../visible-text.js';

/** The emulator's default port. */
export const DEFAULT_EMULATOR_PORT = 4400;

interface EmulateOptions {
  port: string;
  speed: string;
}

/** Registers `emulate`. */
export function emulateCommand(program: Command): void {
  withJson(program.command('emulate'))
    .description(
      'run both services on 127.0.0.1: management APIs, real signed deliveries with retries, a live page at /',
    )
    .option('--port <port>', 'the port (0 picks a free one)', String(DEFAULT_EMULATOR_PORT))
    .option('--speed <x>', 'run retry and pause timing x times faster (60: a minute takes a second)', '1')
    .action(runAction(emulate as never));
}

async function emulate(out: Output, options: EmulateOptions): Promise<ExitCode> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new CliError(`--port must be 0 to 65535 (got ${options.port}).`);
  const speed = Number(options.speed);
  if (!Number.isFinite(speed) || speed < 1 || speed > 100_000) {
    throw new CliError(`--speed must be a number from 1 to 100000 (got ${options.speed}).`);
  }
  const clock = createScaledClock(speed);
  const state = createEmulatorState(clock, speed);
  let started: Awaited<ReturnType<typeof startEmulatorServer>>;
  try {
    started = await startEmulatorServer(state, port);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      `Cannot listen on 127.0.0.1:${port} (${code ?? String(error)}).`,
      EXIT.unreachable,
      'listen_failed',
      code === 'EADDRINUSE' ? 'Another process uses the port: pass --port 0 or another port.' : undefined,
    );
  }
  const { address } = started;
  if (out.json) {
    // The first line says where it listens; then one JSON line per attempt, pause and skip.
    process.stdout.write(`${jsonText({ type: 'listening', speed, ...address })}\n`);
  } else {
    out.line(
      `${out.color.bold('svc-webhooks emulator')} on ${address.url}${speed === 1 ? '' : ` (${speed}× speed)`}`,
    );
    out.line(`  page       ${address.url}`);
    out.line(`  email API  ${address.mail.baseUrl}/api/v1   X-API-Key: ${address.mail.apiKey}`);
    out.line(`  CRM API    ${address.crm.baseUrl}/v1       Authorization: Bearer ${address.crm.token}`);
    out.line(`  events     svc-webhooks trigger mail delivered --emulator ${address.mail.baseUrl}`);
    out.line(out.color.dim('  Ctrl-C stops it.'));
  }
  state.subscribe((event) => printEvent(out, event, speed));

  // A signal stops everything that would keep the process alive: scheduled retries (the clock's
  // timers), attempts in flight (aborted), then the server and the page's event streams.
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      clock.stop();
      state.stop();
      void started.close().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return EXIT.ok;
}

function printEvent(out: Output, event: EmitterReport, speed: number): void {
  if (out.json) {
    const { type, service, at } = event;
    const line: Record<string, unknown> = { type, service, at: new Date(at).toISOString() };
    if (event.type === 'attempt') {
      Object.assign(line, {
        deliveryId: event.delivery.id,
        webhookId: event.delivery.webhookId,
        event: event.delivery.event,
        attempt: event.attempt.attempt,
        kind: event.attempt.kind,
        attemptedAt: event.attempt.attemptedAt,
        statusCode: event.attempt.statusCode,
        success: event.attempt.success,
        error: event.attempt.error,
        durationMs: realDuration(event.attempt.durationMs, speed),
        nextAttemptAt: event.delivery.nextAttemptAt,
      });
    } else if (event.type === 'delivery_settled') {
      Object.assign(line, { deliveryId: event.delivery.id, status: event.delivery.status });
    } else if (event.type === 'no_subscriber') {
      Object.assign(line, { event: event.event });
    } else {
      Object.assign(line, { webhookId: event.webhookId });
      if (event.type === 'skipped') Object.assign(line, { event: event.event, reason: event.reason });
    }
    process.stdout.write(`${jsonText(line)}\n`);
    return;
  }
  const c = out.color;
  if (event.type === 'attempt') {
    const a = event.attempt;
    const status = a.success
      ? c.green(String(a.statusCode))
      : c.red(a.statusCode ? String(a.statusCode) : 'ERR');
    const next = event.delivery.nextAttemptAt ? c.dim(` next ${event.delivery.nextAttemptAt}`) : '';
    out.line(
      `${status} ${event.service} ${visible(event.delivery.event)} #${a.attempt} ${a.kind} ${c.dim(`${visible(event.delivery.id)} ${realDuration(a.durationMs, speed)} ms`)}${a.error ? ` ${c.yellow(visible(a.error))}` : ''}${next}`,
    );
  } else if (event.type === 'webhook_paused') {
    out.line(
      c.red(
        `paused mail webhook ${visible(event.webhookId)} after ${event.consecutiveFailures} failed deliveries`,
      ),
    );
  } else if (event.type === 'skipped') {
    out.line(
      c.yellow(
        `skipped ${event.service} ${visible(event.event)} for ${visible(event.webhookId)}: ${visible(event.reason)}`,
      ),
    );
  }
}
