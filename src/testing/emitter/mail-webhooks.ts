import { MAIL_EVENT_NAMES, type MailEventName } from '../../mail/event-names.js';
import { WebhookError } from '../../shared/errors.js';
import { randomToken } from '../random.js';
import { checkWebhookUrl, type UrlPolicyOptions } from '../url-policy.js';
import { asObject, eventsField, secretField, stringField } from './input.js';
import type { CreateMailWebhookInput, MailEmitterWebhook, UpdateMailWebhookInput } from './mail-types.js';
import type { WebhookRegistry } from './webhook-registry.js';

/** The email webhooks' management operations (email-service §4) over the emitter's registry. */
export function mailWebhookApi(
  registry: WebhookRegistry<MailEmitterWebhook>,
  policy: UrlPolicyOptions & { newEvents?: readonly string[] | undefined },
) {
  const { iso, get, masked } = registry;
  // The service's events, and those of a newer version it is told to send (`newEvents`).
  const accepted = [...MAIL_EVENT_NAMES, ...(policy.newEvents ?? [])] as MailEventName[];
  return {
    /**
     * Registers a webhook (`POST /api/v1/webhooks`). The result carries the full secret: the only
     * time it is shown. Internal URLs are refused with `webhook_url_refused` (422).
     */
    createWebhook(input: CreateMailWebhookInput): MailEmitterWebhook {
      const body = asObject(input, 'The webhook');
      const url = checkWebhookUrl(stringField(body, 'url', true), policy);
      const events = eventsField<MailEventName>(body, accepted, true)!;
      const description = stringField(body, 'description', false) ?? '';
      const now = iso();
      return registry.add({
        id: randomToken(registry.random, 'wh_', 8),
        url,
        events,
        description,
        secret: secretField(body) ?? registry.newSecret(),
        status: 'active',
        consecutiveFailures: 0,
        createdAt: now,
        updatedAt: now,
        pausedAt: null,
      });
    },
    ...registry.api,
    /**
     * Changes url, events, description or status (`PATCH /api/v1/webhooks/:id`); `status: 'active'`
     * reactivates a paused webhook and resets its failure count.
     */
    updateWebhook(id: string, input: UpdateMailWebhookInput): MailEmitterWebhook {
      const webhook = get(id);
      const body = asObject(input, 'The update');
      const url =
        body.url === undefined ? undefined : checkWebhookUrl(stringField(body, 'url', true), policy);
      const events = eventsField<MailEventName>(body, accepted, false);
      const description = stringField(body, 'description', false);
      const status = body.status;
      if (status !== undefined && status !== 'active' && status !== 'paused') {
        throw new WebhookError('invalid_payload', 'status must be "active" (reactivate) or "paused".');
      }
      if (url !== undefined) webhook.url = url;
      if (events !== undefined) webhook.events = events;
      if (description !== undefined) webhook.description = description;
      if (status === 'paused' && webhook.status === 'active') {
        webhook.status = 'paused';
        webhook.pausedAt = iso();
      } else if (status === 'active') {
        webhook.status = 'active';
        webhook.pausedAt = null;
        webhook.consecutiveFailures = 0;
      }
      webhook.updatedAt = iso();
      return masked(webhook);
    },
  };
}
