/**
 * One signed example delivery of every event, built from the fixtures with a fixed seed, time and
 * secret, so the AsyncAPI document of `svc-webhooks schemas` and the docs' event pages show the same
 * bytes on every run, and a reader can check a signature with the secret printed beside it.
 */
import { CRM_EVENT_NAMES } from '../crm/event-names.js';
import { MAIL_EVENT_NAMES } from '../mail/event-names.js';
import { createSignedRequest } from '../testing/fixtures/signed-request.js';
import type { AsyncApiExample } from './asyncapi.js';

/** The secret the examples are signed with: an example, never one of a real webhook. */
export const EXAMPLE_SECRET = 'whsec_example_0123456789abcdef';

/** The time of every example: 2026-03-02T09:30:00.000Z. */
const EXAMPLE_TIME = Date.UTC(2026, 2, 2, 9, 30);

// `Headers` lowercases names; the examples spell them as the specs do.
const SPELLING = new Map(
  [
    'Content-Type',
    'User-Agent',
    'X-SvcMAIL-Event',
    'X-SvcMAIL-Sig',
    'X-SvcMAIL-Id',
    'X-Svc-Signature',
    'X-Svc-Event',
    'X-Svc-Delivery',
  ].map((name) => [name.toLowerCase(), name]),
);

async function example(request: Promise<Request>): Promise<Omit<AsyncApiExample, 'service' | 'event'>> {
  const sent = await request;
  const headers: Record<string, string> = {};
  for (const [name, value] of sent.headers) headers[SPELLING.get(name) ?? name] = value;
  return { headers, payload: JSON.parse(await sent.text()) };
}

/** Every event's example delivery, the email service's first, in the specs' order. */
export async function exampleDeliveries(): Promise<AsyncApiExample[]> {
  const common = { secret: EXAMPLE_SECRET, now: EXAMPLE_TIME };
  const mail = MAIL_EVENT_NAMES.map(async (event) => ({
    service: 'mail' as const,
    event,
    ...(await example(createSignedRequest({ ...common, service: 'mail', event, seed: `mail:${event}` }))),
  }));
  const crm = CRM_EVENT_NAMES.map(async (event) => ({
    service: 'crm' as const,
    event,
    ...(await example(createSignedRequest({ ...common, service: 'crm', event, seed: `crm:${event}` }))),
  }));
  return Promise.all([...mail, ...crm]);
}
