import { CRM_EVENT_NAMES, type CrmEventName } from '../../crm/event-names.js';
import { randomUuid } from '../random.js';
import { checkWebhookUrl, type UrlPolicyOptions } from '../url-policy.js';
import type { CreateCrmWebhookInput, CrmEmitterWebhook, UpdateCrmWebhookInput } from './crm-types.js';
import { asObject, booleanField, eventsField, secretField, stringField } from './input.js';
import type { WebhookRegistry } from './webhook-registry.js';

/**
 * The CRM webhooks' management operations (crm-service §4) over the emitter's registry;
 * `onDeactivate` cancels the pending retries of a webhook set inactive.
 */
export function crmWebhookApi(
  registry: WebhookRegistry<CrmEmitterWebhook>,
  policy: UrlPolicyOptions & { newEvents?: readonly string[] | undefined },
  onDeactivate: (webhookId: string) => void,
) {
  const { iso, get, masked } = registry;
  // The service's events, and those of a newer version it is told to send (`newEvents`).
  const accepted = [...CRM_EVENT_NAMES, ...(policy.newEvents ?? [])] as CrmEventName[];
  return {
    /** Registers a webhook (`POST /v1/webhooks`, 201); the result carries the full secret. */
    createWebhook(input: CreateCrmWebhookInput): CrmEmitterWebhook {
      const body = asObject(input, 'The webhook');
      const name = stringField(body, 'name', true)!;
      const url = checkWebhookUrl(stringField(body, 'url', true), policy);
      const events = eventsField<CrmEventName>(body, accepted, true)!;
      const now = iso();
      return registry.add({
        id: randomUuid(registry.random),
        name,
        url,
        events,
        active: booleanField(body, 'active') ?? true,
        secret: secretField(body) ?? registry.newSecret(),
        createdAt: now,
        updatedAt: now,
      });
    },
    ...registry.api,
    /** Event names accepted for subscription (`GET /v1/webhooks/events`). */
    listEventNames: (): CrmEventName[] => [...CRM_EVENT_NAMES],
    /** Changes name, url, events or active (`PATCH /v1/webhooks/:id`); deactivating cancels pending retries. */
    updateWebhook(id: string, input: UpdateCrmWebhookInput): CrmEmitterWebhook {
      const webhook = get(id);
      const body = asObject(input, 'The update');
      const name = stringField(body, 'name', false);
      const url =
        body.url === undefined ? undefined : checkWebhookUrl(stringField(body, 'url', true), policy);
      const events = eventsField<CrmEventName>(body, accepted, false);
      const active = booleanField(body, 'active');
      if (name !== undefined) webhook.name = name;
      if (url !== undefined) webhook.url = url;
      if (events !== undefined) webhook.events = events;
      if (active !== undefined) webhook.active = active;
      webhook.updatedAt = iso();
      if (active === false) onDeactivate(id);
      return masked(webhook);
    },
  };
}
