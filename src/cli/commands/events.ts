/** `svc-webhooks events [service]`: the event catalogue, one line per event from the specs. */
import type { Command } from 'commander';
import { type EventEntry, eventCatalogue, parseService, type Service } from '../events.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { Output } from '../output.js';
import { runAction, withJson } from '../run-action.js';

/** Registers `events`. */
export function eventsCommand(program: Command): void {
  withJson(program.command('events'))
    .description('list the events of both services (or of one), with what each means')
    .argument('[service]', 'mail or crm (default: both)')
    .action(runAction(events as never));
}

async function events(out: Output, service: string | undefined): Promise<ExitCode> {
  printEvents(out, service === undefined ? undefined : parseService(service));
  return EXIT.ok;
}

const TITLES: Record<Service, string> = {
  mail: 'mail: the email service (email-service §6)',
  crm: 'crm: the CRM service (crm-service §6)',
};

/**
 * Prints the catalogue of `service` (both when undefined): with `--json`
 * `{ ok, events: [{ service, name, description }] }`, else one aligned line per event under a title
 * per service. `fixtures <service>` without an event prints the same.
 */
export function printEvents(out: Output, service: Service | undefined): void {
  const entries = eventCatalogue(service);
  out.result({ ok: true, events: entries });
  const width = Math.max(...entries.map((e) => e.name.length)) + 2;
  const services: Service[] = service === undefined ? ['mail', 'crm'] : [service];
  services.forEach((svc, i) => {
    if (i > 0) out.line();
    const own = entries.filter((e: EventEntry) => e.service === svc);
    out.line(out.color.bold(`${TITLES[svc]}, ${own.length} events`));
    for (const e of own) out.line(`  ${e.name.padEnd(width)}${out.color.dim(e.description)}`);
  });
}
