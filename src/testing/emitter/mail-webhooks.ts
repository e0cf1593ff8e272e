import { MAIL_EVENT_NAMES, type MailEventName } from '../../mail/event-names.js';
import { WebhookError } from '../../shared/errors.js';
import type { SchedulerClock } from '../clock/types.js';
import { type Random, randomToken } from '../random.js';
import { checkWebhookUrl, type UrlPolicyOptions } from '../url-policy.js';
import { asObject, eventsField, stringField } from './input.js';
import type { CreateMailWebhookInput, MailWebhook, UpdateMailWebhookInput } from './mail-types.js';
import { generateSecret, maskSecret } from './secrets.js';

interface Hooks {
  clock: () => SchedulerClock;
  random: () => Random;
  onDelete(webhookId: string): void;
}

/** The email webhooks of one emitter and their management operations (email-service §4). */
export function createMailWebhooks(policy: UrlPolicyOptions, hooks: Hooks) {
  const webhooks = new Map<string, MailWebhook>();
  const iso = (): string => new Date(hooks.clock().now()).toISOString();
  const masked = (w: MailWebhook): MailWebhook => ({
    ...w,
    events: [...w.events],
    secret: maskSecret(w.secret),
  });

  function get(id: string): MailWebhook {
    const webhook = webhooks.get(id);
    if (!webhook) throw new WebhookError('webhook_not_found', `No webhook with id ${id}.`);
    return webhook;
  }

  return {
    find: (id: string): MailWebhook | undefined => webhooks.get(id),
    get,
    pause(webhook: MailWebhook): void {
      webhook.status = 'paused';
      webhook.pausedAt = iso();
      webhook.updatedAt = webhook.pausedAt;
    },
    /** Active webhooks subscribed to `event`; paused ones are reported to `onSkip`. */
    subscribed(event: string, onSkip: (webhookId: string) => void): MailWebhook[] {
      const targets: MailWebhook[] = [];
      for (const webhook of webhooks.values()) {
        if (!(webhook.events as string[]).includes(event)) continue;
        if (webhook.status === 'paused') onSkip(webhook.id);
        else targets.push(webhook);
      }
      return targets;
    },
    api: {
      /**
       * Registers a webhook (`POST /api/v1/webhooks`). The result carries the full secret: the only
       * time it is shown. Internal URLs are refused with `webhook_url_refused` (422).
       */
      createWebhook(input: CreateMailWebhookInput): MailWebhook {
        const body = asObject(input, 'The webhook');
        const url = checkWebhookUrl(stringField(body, 'url', true), policy);
        const events = eventsField<MailEventName>(body, MAIL_EVENT_NAMES, true)!;
        const description = stringField(body, 'description', false) ?? '';
        const now = iso();
        const webhook: MailWebhook = {
          id: randomToken(hooks.random(), 'wh_', 8),
          url,
          events,
          description,
          secret: generateSecret(hooks.random()),
          status: 'active',
          consecutiveFailures: 0,
          createdAt: now,
          updatedAt: now,
          pausedAt: null,
        };
        webhooks.set(webhook.id, webhook);
        return { ...webhook, events: [...events] };
      },
      /** One webhook, secret masked. */
      getWebhook: (id: string): MailWebhook => masked(get(id)),
      /** Every webhook, secrets masked, in creation order. */
      listWebhooks: (): MailWebhook[] => [...webhooks.values()].map(masked),
      /**
       * Changes url, events, description or status (`PATCH /api/v1/webhooks/:id`); `status: 'active'`
       * reactivates a paused webhook and resets its failure count.
       */
      updateWebhook(id: string, input: UpdateMailWebhookInput): MailWebhook {
        const webhook = get(id);
        const body = asObject(input, 'The update');
        const url =
          body.url === undefined ? undefined : checkWebhookUrl(stringField(body, 'url', true), policy);
        const events = eventsField<MailEventName>(body, MAIL_EVENT_NAMES, false);
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
      /** Replaces the secret at once (`POST /api/v1/webhooks/:id/rotate-secret`); the new one is returned in full. */
      rotateSecret(id: string): { id: string; secret: string } {
        const webhook = get(id);
        webhook.secret = generateSecret(hooks.random());
        webhook.updatedAt = iso();
        return { id, secret: webhook.secret };
      },
      /** Removes a webhook; its pending retries are cancelled. */
      deleteWebhook(id: string): { id: string; deleted: true } {
        get(id);
        webhooks.delete(id);
        hooks.onDelete(id);
        return { id, deleted: true };
      },
      /** The full current secret, for tests (the service itself never shows it again). */
      revealSecret: (id: string): string => get(id).secret,
    },
  };
}
