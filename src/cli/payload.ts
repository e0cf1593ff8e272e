/** The body of a command's delivery: a fixture of the event with `--set` fields over it. */
import type { CrmEventName } from '../crm/event-names.js';
import type { MailEventName } from '../mail/event-names.js';
import { createFixtures } from '../testing/fixtures/fixtures.js';
import type { Service } from './events.js';

/** A schema-valid payload (email) or envelope (CRM, `id` = `deliveryId`) with `fields` applied. */
export function buildPayload(
  service: Service,
  event: string,
  fields: Record<string, unknown>,
  deliveryId?: string,
): Record<string, unknown> {
  const fixtures = createFixtures();
  if (service === 'mail') return fixtures.mail(event as MailEventName, fields) as Record<string, unknown>;
  return fixtures.crmEnvelope(
    event as CrmEventName,
    fields,
    deliveryId === undefined ? {} : { id: deliveryId },
  ) as unknown as Record<string, unknown>;
}
