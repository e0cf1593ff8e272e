import { CRM_EVENT_NAMES, type CrmEventName } from '../../crm/event-names.js';
import { WebhookError } from '../../shared/errors.js';
import type { SchedulerClock } from '../clock/types.js';
import { type Random, randomUuid } from '../random.js';
import { checkWebhookUrl, type UrlPolicyOptions } from '../url-policy.js';
import type { CreateCrmWebhookInput, CrmWebhook, UpdateCrmWebhookInput } from './crm-types.js';
import { asObject, booleanField, eventsField, stringField } from './input.js';
import { generateSecret, maskSecret } from './secrets.js';

interface Hooks {
  clock: () => SchedulerClock;
  random: () => Random;
  onDelete(webhookId: string): void;
  onDeactivate(webhookId: string): void;
}

/** The CRM webhooks of one emitter and their management operations (crm-service §4). */
export function createCrmWebhooks(policy: UrlPolicyOptions, hooks: Hooks) {
  const webhooks = new Map<string, CrmWebhook>();
  const iso = (): string => new Date(hooks.clock().now()).toISOString();
  const masked = (w: CrmWebhook): CrmWebhook => ({
    ...w,
    events: [...w.events],
    secret: maskSecret(w.secret),
  });

  function get(id: string): CrmWebhook {
    const webhook = webhooks.get(id);
    if (!webhook) throw new WebhookError('webhook_not_found', `No webhook with id ${id}.`);
    return webhook;
  }

  return {
    find: (id: string): CrmWebhook | undefined => webhooks.get(id),
    get,
    /** Webhooks subscribed to `event`; inactive ones are reported to `onSkip`. */
    subscribed(event: string, onSkip: (webhookId: string) => void): CrmWebhook[] {
      const targets: CrmWebhook[] = [];
      for (const webhook of webhooks.values()) {
        if (!(webhook.events as string[]).includes(event)) continue;
        if (webhook.active) targets.push(webhook);
        else onSkip(webhook.id);
      }
      return targets;
    },
    api: {
      /** Registers a webhook (`POST /v1/webhooks`, 201); the result carries the full secret. */
      createWebhook(input: CreateCrmWebhookInput): CrmWebhook {
        const body = asObject(input, 'The webhook');
        const name = stringField(body, 'name', true)!;
        const url = checkWebhookUrl(stringField(body, 'url', true), policy);
        const events = eventsField<CrmEventName>(body, CRM_EVENT_NAMES, true)!;
        const now = iso();
        const webhook: CrmWebhook = {
          id: randomUuid(hooks.random()),
          name,
          url,
          events,
          active: booleanField(body, 'active') ?? true,
          secret: generateSecret(hooks.random()),
          createdAt: now,
          updatedAt: now,
        };
        webhooks.set(webhook.id, webhook);
        return { ...webhook, events: [...events] };
      },
      /** One webhook, secret masked. */
      getWebhook: (id: string): CrmWebhook => masked(get(id)),
      /** The tenant's webhooks (`GET /v1/webhooks`), secrets masked. */
      listWebhooks: (): CrmWebhook[] => [...webhooks.values()].map(masked),
      /** Event names accepted for subscription (`GET /v1/webhooks/events`). */
      listEventNames: (): CrmEventName[] => [...CRM_EVENT_NAMES],
      /** Changes name, url, events or active (`PATCH /v1/webhooks/:id`); deactivating cancels pending retries. */
      updateWebhook(id: string, input: UpdateCrmWebhookInput): CrmWebhook {
        const webhook = get(id);
        const body = asObject(input, 'The update');
        const name = stringField(body, 'name', false);
        const url =
          body.url === undefined ? undefined : checkWebhookUrl(stringField(body, 'url', true), policy);
        const events = eventsField<CrmEventName>(body, CRM_EVENT_NAMES, false);
        const active = booleanField(body, 'active');
        if (name !== undefined) webhook.name = name;
        if (url !== undefined) webhook.url = url;
        if (events !== undefined) webhook.events = events;
        if (active !== undefined) webhook.active = active;
        webhook.updatedAt = iso();
        if (active === false) hooks.onDeactivate(id);
        return masked(webhook);
      },
      /** A new secret; the old one stops working at once (crm-service §3), also for pending retries. */
      rotateSecret(id: string): { id: string; secret: string } {
        const webhook = get(id);
        webhook.secret = generateSecret(hooks.random());
        webhook.updatedAt = iso();
        return { id, secret: webhook.secret };
      },
      /** Removes a webhook (`DELETE /v1/webhooks/:id`); its pending retries are cancelled. */
      deleteWebhook(id: string): { id: string; deleted: true } {
        get(id);
        webhooks.delete(id);
        hooks.onDelete(id);
        return { id, deleted: true };
      },
      /** The full current secret, for tests. */
      revealSecret: (id: string): string => get(id).secret,
    },
  };
}
