/** Service and event names as the commands accept them, with the lists in the error message. */
import {
  CRM_EVENT_DESCRIPTIONS,
  CRM_EVENT_NAMES,
  type CrmEventName,
  isCrmEventName,
} from '../crm/event-names.js';
import {
  isMailEventName,
  MAIL_EVENT_DESCRIPTIONS,
  MAIL_EVENT_NAMES,
  type MailEventName,
} from '../mail/event-names.js';
import { CliError } from './exit-codes.js';

/** The two services. */
export type Service = 'mail' | 'crm';

/** `mail` or `crm`, or a usage error. */
export function parseService(value: string | undefined): Service {
  if (value === 'mail' || value === 'crm') return value;
  throw new CliError(
    value === undefined ? 'Name the service: mail or crm.' : `Unknown service "${value}": use mail or crm.`,
    undefined,
    'unknown_service',
  );
}

/** A known event of `service`, or a usage error listing them. */
export function parseEvent(service: Service, value: string): MailEventName | CrmEventName {
  if (service === 'mail' ? isMailEventName(value) : isCrmEventName(value)) {
    return value as MailEventName | CrmEventName;
  }
  const names: readonly string[] = service === 'mail' ? MAIL_EVENT_NAMES : CRM_EVENT_NAMES;
  throw new CliError(
    `Unknown ${service} event "${value}". Events: ${names.join(', ')}.`,
    undefined,
    'unknown_event',
  );
}

/** What a header may carry of an event name: printable ASCII, no space (the services' names are). */
const EVENT_NAME = /^[\x21-\x7e]{1,100}$/;

/**
 * An event `service` does not know, as a newer service would send it (`--new-event`): a usage error
 * for a known event (it has a fixture: drop the flag) or a name no header could carry.
 */
export function parseNewEvent(service: Service, value: string): string {
  if (service === 'mail' ? isMailEventName(value) : isCrmEventName(value))
    throw new CliError(
      `"${value}" is a ${service} event this version knows: drop --new-event to send its fixture.`,
      undefined,
      'unknown_event',
    );
  if (!EVENT_NAME.test(value))
    throw new CliError(
      `--new-event: "${value}" is not an event name (1 to 100 printable characters, no space).`,
      undefined,
      'unknown_event',
    );
  return value;
}

/** One event of the catalogue: its service, name and the one line the spec gives it. */
export interface EventEntry {
  service: Service;
  name: string;
  description: string;
}

/** The events of `service` (or of both), in the specs' order, each with its one-line description. */
export function eventCatalogue(service?: Service): EventEntry[] {
  const mail = MAIL_EVENT_NAMES.map((name) => ({
    service: 'mail' as const,
    name,
    description: MAIL_EVENT_DESCRIPTIONS[name],
  }));
  const crm = CRM_EVENT_NAMES.map((name) => ({
    service: 'crm' as const,
    name,
    description: CRM_EVENT_DESCRIPTIONS[name],
  }));
  return service === 'mail' ? mail : service === 'crm' ? crm : [...mail, ...crm];
}
