/** `svc-webhooks trigger <service> <event>`: makes an event happen in a running emulator. */
import type { Command } from 'commander';
import { parseEvent, parseNewEvent, parseService } from '../events.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import { parseUrl, readEmulatorJson } from '../http.js';
import { describeFetchError, type Output } from '../output.js';
import { receiverError } from '../receiver-error.js';
import { runAction, withJson } from '../run-action.js';
import { collectSet, parseSetFields } from '../set-fields.js';
import { visible } from '../visible-text.js';
import { DEFAULT_EMULATOR_PORT } from './emulate.js';

interface TriggerOptions {
  emulator: string;
  set: string[];
  newEvent?: boolean;
}

/** Registers `trigger`. */
export function triggerCommand(program: Command): void {
  withJson(program.command('trigger'))
    .description('make an event happen in a running emulator: it delivers it to every subscribed webhook')
    .argument('<service>', 'mail or crm')
    .argument('<event>', 'an event name')
    .option('--emulator <url>', 'the emulator', `http://127.0.0.1:${DEFAULT_EMULATOR_PORT}`)
    .option('--set <field=value>', 'set a payload field (CRM: a data field); repeatable', collectSet, [])
    .option('--new-event', 'an event this version does not know, named by emulate --new-event')
    .action(runAction(trigger as never));
}

interface Attempt {
  statusCode: number;
  success?: boolean;
  error: string | null;
  responseBody?: string | null;
}

interface Delivery {
  id: string;
  webhookId: string;
  status: string;
  attempts: Attempt[];
}

const succeeded = (attempt: Attempt | undefined): boolean =>
  attempt !== undefined && attempt.statusCode >= 200 && attempt.statusCode < 300;

async function trigger(
  out: Output,
  service: string,
  event: string,
  options: TriggerOptions,
): Promise<ExitCode> {
  const svc = parseService(service);
  const name = options.newEvent ? parseNewEvent(svc, event) : parseEvent(svc, event);
  const base = parseUrl(options.emulator, '--emulator');
  let response: Response;
  try {
    response = await fetch(new URL('/_emulator/events', base), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ service: svc, event: name, data: parseSetFields(options.set) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const { message, exitCode } = describeFetchError(error);
    throw new CliError(`${base}: ${message}`, exitCode, 'unreachable', 'Start it with: svc-webhooks emulate');
  }
  const body = ((await readEmulatorJson(response)) ?? {}) as {
    deliveries?: Delivery[];
    error?: { message: string };
  };
  if (!Array.isArray(body.deliveries) && response.ok) {
    throw new CliError(
      `${base}: not an emulator's answer (not JSON, or over 1 MiB).`,
      EXIT.failed,
      'emulator_invalid',
    );
  }
  if (!response.ok) {
    throw new CliError(
      body.error?.message ?? `The emulator answered ${response.status}.`,
      EXIT.failed,
      'emulator_refused',
    );
  }
  const deliveries = body.deliveries ?? [];
  // docs/cli.md "Exit codes": a first attempt answered with anything but a 2xx is a failure (exit 1),
  // even though the emulator keeps retrying it.
  const ok = deliveries.every((d) => succeeded(d.attempts?.[0]));
  out.result({
    ok,
    service: svc,
    event: name,
    deliveries: deliveries.map((d) => {
      const error = receiverError(d.attempts?.[0]?.responseBody);
      return error ? { ...d, errorCode: error.code } : d;
    }),
  });
  if (deliveries.length === 0) out.line(`${name}: no active webhook subscribes to it; nothing was sent.`);
  for (const d of deliveries) {
    const first = d.attempts?.[0];
    const error = receiverError(first?.responseBody);
    const answer = first ? visible(first.statusCode || first.error) : '';
    out.line(
      `${d.status === 'succeeded' ? out.color.green(d.status) : out.color.yellow(visible(d.status))} ${name} -> ${visible(d.webhookId)} ${out.color.dim(visible(d.id))} ${answer}${error ? ` ${out.color.red(visible(error.code))}` : ''}`,
    );
    if (error?.message) out.line(`  ${visible(error.message)}`);
    if (first && !succeeded(first)) {
      out.line(
        out.color.dim(
          `  ${error?.code === 'signature_mismatch' ? "your app checks another secret than this webhook's: start it with the secret the registration (or the last rotation) returned; " : ''}the emulator retries it on its own schedule (the page at ${base} shows each attempt).`,
        ),
      );
    }
  }
  return ok ? EXIT.ok : EXIT.failed;
}
