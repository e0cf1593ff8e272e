/**
 * The control routes that change the emulator: make an event happen (a fixture with fields over it,
 * or an exact payload checked against the schema first) and add a webhook.
 */

import { CRM_EVENT_NAMES, type CrmEventName, isCrmEventName } from '../../crm/event-names.js';
import { isMailEventName, MAIL_EVENT_NAMES, type MailEventName } from '../../mail/event-names.js';
import { WebhookError } from '../../shared/errors.js';
import { json } from '../../testing/api/responses.js';
import type { EmittedDelivery } from '../../testing/emitter/types.js';
import { payloadIssues } from './catalogue.js';
import type { EmulatorState } from './state.js';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `POST /_emulator/events` `{ service, event, data? }` or `{ service, event, payload }`: emits the
 * event to every subscribed webhook; an event of `emulate --new-event` with `data` (or `payload`) as
 * given. `data` sets fields of a fixture; `payload` is sent as it is
 * (email: the payload; CRM: the envelope's `data`) once it passes the event's schema, else 400
 * `invalid_payload` with the schema's `issues` and nothing is sent.
 */
export async function emitEvent(
  state: EmulatorState,
  _params: Record<string, string>,
  body: unknown,
): Promise<Response> {
  const input = isObject(body) ? body : {};
  const { service, event } = input;
  const known =
    (service === 'mail' && isMailEventName(event)) || (service === 'crm' && isCrmEventName(event));
  // An event of a newer service (`emulate --new-event`): sent with `data` as given, never validated.
  const newer =
    (service === 'mail' || service === 'crm') &&
    typeof event === 'string' &&
    state.newEvents[service].includes(event);
  if (!known && !newer) {
    throw new WebhookError(
      'invalid_payload',
      'Send { "service": "mail" | "crm", "event": "<event name>", "data": { …fields } }.',
    );
  }
  let fields: Record<string, unknown> = isObject(input.data) ? input.data : {};
  let exact = false;
  if (!known && isObject(input.payload)) fields = input.payload;
  else if (input.payload !== undefined && known) {
    const issues = payloadIssues(service, event as string, input.payload);
    if (issues.length > 0) {
      const first = issues[0]!;
      return json(400, {
        error: {
          code: 'invalid_payload',
          message: `Not a valid ${event as string} ${service === 'mail' ? 'payload' : 'data object'}: ${first.path}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}. Nothing was sent.`,
          issues,
        },
      });
    }
    fields = input.payload as Record<string, unknown>;
    exact = true;
  }
  const options = { fixture: !exact };
  const deliveries: EmittedDelivery[] =
    service === 'mail'
      ? await state.mail.emit(event as MailEventName, fields, options)
      : await state.crm.emit(event as CrmEventName, fields, options);
  return json(200, { service, event, deliveries });
}

/**
 * `POST /_emulator/webhooks` `{ service, url, events?, secret? }` (the page's form): registers a
 * webhook as the service's management API would, to every event when `events` is empty or absent.
 * Answers 201 with the webhook and its full secret (generated unless given).
 */
export async function addWebhook(
  state: EmulatorState,
  _params: Record<string, string>,
  body: unknown,
): Promise<Response> {
  const input = isObject(body) ? body : {};
  const { service, url, secret } = input;
  const events = Array.isArray(input.events) && input.events.length > 0 ? input.events : undefined;
  const own = typeof secret === 'string' && secret !== '' ? { secret } : {};
  if (service === 'mail') {
    const webhook = state.mail.createWebhook({
      url: url as string,
      events: (events ?? [...MAIL_EVENT_NAMES, ...state.newEvents.mail]) as MailEventName[],
      description: 'added on the emulator page',
      ...own,
    });
    return json(201, { service, ...webhook });
  }
  if (service === 'crm') {
    const webhook = state.crm.createWebhook({
      name: 'added on the emulator page',
      url: url as string,
      events: (events ?? [...CRM_EVENT_NAMES, ...state.newEvents.crm]) as CrmEventName[],
      ...own,
    });
    return json(201, { service, ...webhook });
  }
  throw new WebhookError('invalid_payload', 'Choose the service: "mail" or "crm".');
}
