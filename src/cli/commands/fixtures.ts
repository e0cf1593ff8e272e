/**
 * `svc-webhooks fixtures <service> [event]`: prints a valid payload of the event, or without an
 * event the service's events (as `svc-webhooks events <service>`).
 */
import type { Command } from 'commander';
import { parseEvent, parseService } from '../events.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { Output } from '../output.js';
import { buildPayload } from '../payload.js';
import { runAction, withJson } from '../run-action.js';
import { collectSet, parseSetFields } from '../set-fields.js';
import { printEvents } from './events.js';

/** Registers `fixtures`. */
export function fixturesCommand(program: Command): void {
  withJson(program.command('fixtures'))
    .description('print a valid payload of an event (the CRM envelope with its data)')
    .argument('<service>', 'mail or crm')
    .argument('[event]', 'an event name, e.g. bounced or deal.won (none: list the events)')
    .option('--set <field=value>', 'set a field (repeatable; JSON values, empty removes)', collectSet, [])
    .action(runAction(fixtures as never));
}

async function fixtures(
  out: Output,
  service: string,
  event: string | undefined,
  options: { set: string[] },
): Promise<ExitCode> {
  const svc = parseService(service);
  if (event === undefined) {
    printEvents(out, svc);
    return EXIT.ok;
  }
  const name = parseEvent(svc, event);
  const payload = buildPayload(svc, name, parseSetFields(options.set));
  // The payload is the document in both modes: with --json it is printed compact.
  process.stdout.write(out.json ? `${JSON.stringify(payload)}\n` : `${JSON.stringify(payload, null, 2)}\n`);
  return EXIT.ok;
}
