/**
 * The emulator's own routes under `/_emulator/` (not part of either service's API): make an event
 * happen, read the state, stream changes, and the page's buttons (retry, reactivate, rotate).
 */

import type { CrmEventName } from '../../crm/event-names.js';
import { isCrmEventName } from '../../crm/event-names.js';
import { isMailEventName, type MailEventName } from '../../mail/event-names.js';
import { isWebhookError, WebhookError } from '../../shared/errors.js';
import { json } from '../../testing/api/responses.js';
import type { EmittedDelivery } from '../../testing/emitter/types.js';
import type { EmulatorState } from './state.js';

type Params = Record<string, string>;
type Handler = (state: EmulatorState, params: Params, body: unknown) => Promise<Response> | Response;

const routes: Array<{ method: string; pattern: RegExp; handler: Handler }> = [
  { method: 'GET', pattern: /^\/_emulator\/state$/, handler: (state) => json(200, state.snapshot()) },
  { method: 'POST', pattern: /^\/_emulator\/events$/, handler: emitEvent },
  {
    method: 'POST',
    pattern: /^\/_emulator\/(?<service>mail|crm)\/webhooks\/(?<id>[^/]+)\/reactivate$/,
    handler: (state, { service, id }) =>
      json(
        200,
        service === 'mail'
          ? state.mail.updateWebhook(id!, { status: 'active' })
          : state.crm.updateWebhook(id!, { active: true }),
      ),
  },
  {
    method: 'POST',
    pattern: /^\/_emulator\/(?<service>mail|crm)\/webhooks\/(?<id>[^/]+)\/rotate-secret$/,
    handler: (state, { service, id }) =>
      json(200, service === 'mail' ? state.mail.rotateSecret(id!) : state.crm.rotateSecret(id!)),
  },
  {
    // crm-service §4 has no manual retry route: the emulator retries email deliveries only.
    method: 'POST',
    pattern: /^\/_emulator\/mail\/webhooks\/(?<id>[^/]+)\/deliveries\/(?<deliveryId>[^/]+)\/retry$/,
    handler: async (state, { id, deliveryId }) => json(200, await state.mail.retryDelivery(id!, deliveryId!)),
  },
];

/** The control route matching `method` and `path`, or undefined. */
export function matchControlRoute(
  method: string,
  path: string,
): { handler: Handler; params: Params } | undefined {
  for (const route of routes) {
    const match = route.pattern.exec(path);
    if (match && route.method === method) {
      const params: Params = {};
      for (const [name, value] of Object.entries(match.groups ?? {}))
        params[name] = decodeURIComponent(value);
      return { handler: route.handler, params };
    }
  }
  return undefined;
}

/** Runs a control route; a `WebhookError` becomes its status and `{ error }` body. */
export async function runControlRoute(
  state: EmulatorState,
  route: { handler: Handler; params: Params },
  body: unknown,
): Promise<Response> {
  try {
    return await route.handler(state, route.params, body);
  } catch (error) {
    if (isWebhookError(error)) return json(error.status, error.toJSON());
    return json(500, { error: { code: 'internal_error', message: 'The emulator failed; see its output.' } });
  }
}

/** `POST /_emulator/events` `{ service, event, data? }`: emits the event to every subscribed webhook. */
async function emitEvent(state: EmulatorState, _params: Params, body: unknown): Promise<Response> {
  const input = (typeof body === 'object' && body !== null ? body : {}) as {
    service?: unknown;
    event?: unknown;
    data?: unknown;
  };
  const data =
    typeof input.data === 'object' && input.data !== null ? (input.data as Record<string, unknown>) : {};
  let deliveries: EmittedDelivery[];
  if (input.service === 'mail' && isMailEventName(input.event)) {
    deliveries = await state.mail.emit(input.event as MailEventName, data);
  } else if (input.service === 'crm' && isCrmEventName(input.event)) {
    deliveries = await state.crm.emit(input.event as CrmEventName, data);
  } else {
    throw new WebhookError(
      'invalid_payload',
      'Send { "service": "mail" | "crm", "event": "<event name>", "data": { …fields } }.',
    );
  }
  return json(200, { service: input.service, event: input.event, deliveries });
}
