/**
 * The page's event catalogue (each event with its one line from the specs and a fixture to edit) and
 * the check of an edited payload against the package's own zod schemas before anything is sent.
 */
import { crmDataSchemas } from '../../crm/schemas.js';
import { mailPayloadSchemas } from '../../mail/schemas.js';
import { createFixtures } from '../../testing/fixtures/fixtures.js';
import { eventCatalogue, type Service } from '../events.js';

/** One event of the page's catalogue: the email payload, or the CRM envelope's `data`. */
export interface CatalogueEntry {
  service: Service;
  name: string;
  description: string;
  payload: unknown;
}

/** Every event of both services with a fresh schema-valid fixture, timestamps on `now`. */
export function catalogue(now: () => number): CatalogueEntry[] {
  const fixtures = createFixtures({ now });
  return eventCatalogue().map((entry) => ({
    ...entry,
    payload:
      entry.service === 'mail'
        ? fixtures.mail(entry.name as keyof typeof mailPayloadSchemas)
        : fixtures.crm(entry.name as keyof typeof crmDataSchemas),
  }));
}

/** One schema complaint: where (`to`, `items.0.price`, or `(payload)`) and what. */
export interface PayloadIssue {
  path: string;
  message: string;
}

type Parser = {
  safeParse(value: unknown): {
    success: boolean;
    error?: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> };
  };
};

/** At most this many issues are returned: a wholly wrong payload would otherwise list every field. */
const MAX_ISSUES = 20;

/**
 * The schema issues of `payload` as the event's receiver would check it (email: the payload; CRM:
 * the envelope's `data`); empty when valid. The event name is known (checked by the caller).
 */
export function payloadIssues(service: Service, event: string, payload: unknown): PayloadIssue[] {
  const schema = (
    service === 'mail'
      ? (mailPayloadSchemas as Record<string, Parser>)[event]
      : (crmDataSchemas as Record<string, Parser>)[event]
  )!;
  const result = schema.safeParse(payload);
  if (result.success) return [];
  return (result.error?.issues ?? []).slice(0, MAX_ISSUES).map((issue) => ({
    path: issue.path.length === 0 ? '(payload)' : issue.path.map(String).join('.'),
    message: issue.message,
  }));
}
