/**
 * The emulator's own routes under `/_emulator/` (not part of either service's API): make an event
 * happen, read the state, one delivery's requests and answers, the event catalogue, add a webhook,
 * and the page's buttons (retry, reactivate, rotate).
 */

import { isWebhookError } from '../../shared/errors.js';
import { json } from '../../testing/api/responses.js';
import { catalogue } from './catalogue.js';
import { addWebhook, emitEvent } from './control-actions.js';
import type { EmulatorState } from './state.js';

type Params = Record<string, string>;
type Handler = (state: EmulatorState, params: Params, body: unknown) => Promise<Response> | Response;

const routes: Array<{ method: string; pattern: RegExp; handler: Handler }> = [
  { method: 'GET', pattern: /^\/_emulator\/state$/, handler: (state) => json(200, state.snapshot()) },
  { method: 'POST', pattern: /^\/_emulator\/events$/, handler: emitEvent },
  { method: 'POST', pattern: /^\/_emulator\/webhooks$/, handler: addWebhook },
  {
    method: 'GET',
    pattern: /^\/_emulator\/catalogue$/,
    handler: (state) => json(200, { events: catalogue(state.clock.now) }),
  },
  {
    method: 'GET',
    pattern: /^\/_emulator\/deliveries\/(?<id>[^/]+)$/,
    handler: (state, { id }) => json(200, state.detail(id!)),
  },
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
