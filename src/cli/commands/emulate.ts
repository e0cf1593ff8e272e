/**
 * `svc-webhooks emulate [--port P] [--speed X] [--forward service=URL…]`: both services as a local
 * HTTP server with a live page; with `--forward`, the app's webhooks registered at start and every
 * delivery attempt streamed to the terminal.
 */
import type { Command } from 'commander';
import { isWebhookError } from '../../shared/errors.js';
import { createScaledClock } from '../../testing/clock/real-clock.js';
import {
  type Forward,
  forwardSecrets,
  parseForwards,
  type RegisteredForward,
  registerForwards,
  sendChecks,
} from '../emulate/forward.js';
import { type EmulatorAddress, startEmulatorServer } from '../emulate/server.js';
import { createEmulatorState } from '../emulate/state.js';
import { createStreamPrinter } from '../emulate/stream-lines.js';
import { parseNewEvent, parseService, type Service } from '../events.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import type { Output } from '../output.js';
import { runAction, withJson } from '../run-action.js';
import { SECRET_ENV } from '../secrets.js';
import { collectSet } from '../set-fields.js';
import { jsonText, visible } from '../visible-text.js';

/** The emulator's default port. */
export const DEFAULT_EMULATOR_PORT = 4400;

interface EmulateOptions {
  port: string;
  speed: string;
  forward?: string[];
  secret?: string[];
  check: boolean;
  newEvent?: string[];
}

/** Registers `emulate`. */
export function emulateCommand(program: Command): void {
  withJson(program.command('emulate'))
    .description(
      'run both services on 127.0.0.1: management APIs, real signed deliveries with retries, a live page at /',
    )
    .option('--port <port>', 'the port (0 picks a free one)', String(DEFAULT_EMULATOR_PORT))
    .option('--speed <x>', 'run retry and pause timing x times faster (60: a minute takes a second)', '1')
    // No default shown: commander would print "(default: [])".
    .option(
      '--forward <service=url>',
      'register a webhook of mail or crm to your app, to every event (repeatable)',
      collectSet,
    )
    .option(
      '--secret <service=secret>',
      "a forward's secret; else $SVC_MAIL_WEBHOOK_SECRET / $SVC_CRM_WEBHOOK_SECRET; else a new one, printed once",
      collectSet,
    )
    .option('--no-check', 'do not send the check delivery to each forward at start')
    .option(
      '--new-event <service=event>',
      'an event this version does not know, as a newer service sends it: webhooks get it, trigger sends it (repeatable)',
      collectSet,
    )
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
  const forwards: Forward[] = parseForwards(options.forward ?? []);
  const secrets = forwardSecrets(forwards, options.secret ?? []);
  const clock = createScaledClock(speed);
  const state = createEmulatorState(clock, speed, { newEvents: parseNewEvents(options.newEvent ?? []) });
  let registered: RegisteredForward[];
  try {
    registered = registerForwards(state, forwards, secrets);
  } catch (error) {
    // A URL the services refuse (credentials in it, for one): nothing listens yet, nothing was sent.
    if (!isWebhookError(error)) throw error;
    throw new CliError(`--forward: ${error.message}`, EXIT.usage, error.code);
  }
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
  printHeader(out, address, speed, registered);
  state.subscribe(createStreamPrinter(out, state));
  if (options.check) void sendChecks(state, registered);

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

/** `--new-event mail=warmed_up` pairs, by service. */
function parseNewEvents(pairs: readonly string[]): Record<Service, string[]> {
  const events: Record<Service, string[]> = { mail: [], crm: [] };
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CliError(`--new-event "${pair}" is not service=event (mail=warmed_up).`);
    const service = parseService(pair.slice(0, at));
    events[service].push(parseNewEvent(service, pair.slice(at + 1)));
  }
  return events;
}

/** Where it listens, the credentials, and each forward with its secret (a new one shown this once). */
function printHeader(
  out: Output,
  address: EmulatorAddress,
  speed: number,
  forwards: readonly RegisteredForward[],
): void {
  if (out.json) {
    // The first line says where it listens; then one JSON line per attempt, pause and skip.
    process.stdout.write(`${jsonText({ type: 'listening', speed, ...address, forwards })}\n`);
    return;
  }
  const c = out.color;
  out.line(`${c.bold('svc-webhooks emulator')} on ${address.url}${speed === 1 ? '' : ` (${speed}× speed)`}`);
  out.line(`  page       ${address.url}`);
  out.line(`  email API  ${address.mail.baseUrl}/api/v1   X-API-Key: ${address.mail.apiKey}`);
  out.line(`  OpenAPI    ${address.mail.baseUrl}/docs/json (email API; a page at /docs)`);
  out.line(`  CRM API    ${address.crm.baseUrl}/v1       Authorization: Bearer ${address.crm.token}`);
  for (const f of forwards) {
    out.line(
      `  forward    ${f.service.padEnd(4)} -> ${visible(f.url)}  (webhook ${f.webhookId}, every event)`,
    );
    if (f.secret) {
      out.line(`             secret ${c.bold(f.secret)}`);
      out.line(
        c.dim(`             (new, shown this once: start your app with ${SECRET_ENV[f.service]} set to it)`),
      );
    } else {
      out.line(c.dim(`             secret from ${f.secretFrom}`));
    }
  }
  const service = forwards[0]?.service ?? 'mail';
  const event = service === 'mail' ? 'delivered' : 'contact.created';
  out.line(`  events     svc-webhooks trigger ${service} ${event} --emulator ${address.mail.baseUrl}`);
  out.line(c.dim('  Ctrl-C stops it.'));
}
