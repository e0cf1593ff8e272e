import type { Clock } from '../../shared/clock.js';
import { WebhookError } from '../../shared/errors.js';
import type { Random } from '../random.js';
import { generateSecret, maskSecret } from './secrets.js';

/** The fields every webhook record has, in both services. */
export interface StoredWebhook {
  id: string;
  url: string;
  events: string[];
  secret: string;
  updatedAt: string;
}

/** What a registry needs from its emitter. */
interface RegistryHooks {
  clock: Required<Clock>;
  random: Random;
  onDelete(webhookId: string): void;
}

/**
 * The webhooks of one emitter and the management operations both services share (read, list,
 * rotate, delete). Creating and changing a webhook is each service's own (its fields differ).
 * `receives` tells whether a webhook gets deliveries (email: not paused; CRM: active).
 */
export function createWebhookRegistry<W extends StoredWebhook>(
  hooks: RegistryHooks,
  receives: (webhook: W) => boolean,
) {
  const webhooks = new Map<string, W>();
  const iso = (): string => new Date(hooks.clock.now()).toISOString();
  const masked = (w: W): W => ({ ...w, events: [...w.events], secret: maskSecret(w.secret) });

  function get(id: string): W {
    const webhook = webhooks.get(id);
    if (!webhook) throw new WebhookError('webhook_not_found', `No webhook with id ${id}.`);
    return webhook;
  }

  return {
    iso,
    masked,
    get,
    find: (id: string): W | undefined => webhooks.get(id),
    random: hooks.random,
    newSecret: (): string => generateSecret(hooks.random),
    /** Stores a new webhook; returns it with its full secret (the only time it is shown). */
    add(webhook: W): W {
      webhooks.set(webhook.id, webhook);
      return { ...webhook, events: [...webhook.events] };
    },
    /** Webhooks that receive `event`; subscribed ones that receive nothing go to `onSkip`. */
    subscribed(event: string, onSkip: (webhookId: string) => void): W[] {
      const targets: W[] = [];
      for (const webhook of webhooks.values()) {
        if (!webhook.events.includes(event)) continue;
        if (receives(webhook)) targets.push(webhook);
        else onSkip(webhook.id);
      }
      return targets;
    },
    api: {
      /** One webhook, secret masked. */
      getWebhook: (id: string): W => masked(get(id)),
      /** Every webhook, secrets masked, in creation order. */
      listWebhooks: (): W[] => [...webhooks.values()].map(masked),
      /**
       * Replaces the secret (`POST …/webhooks/:id/rotate-secret`); the old one stops at once, also for
       * pending retries. The new one is returned in full.
       */
      rotateSecret(id: string): { id: string; secret: string } {
        const webhook = get(id);
        webhook.secret = generateSecret(hooks.random);
        webhook.updatedAt = iso();
        return { id, secret: webhook.secret };
      },
      /** Removes a webhook (`DELETE …/webhooks/:id`); its pending retries are cancelled. */
      deleteWebhook(id: string): { id: string; deleted: true } {
        get(id);
        webhooks.delete(id);
        hooks.onDelete(id);
        return { id, deleted: true };
      },
      /** The full current secret, for tests (the services never show it again). */
      revealSecret: (id: string): string => get(id).secret,
    },
  };
}

/** One service's webhooks. */
export type WebhookRegistry<W extends StoredWebhook> = ReturnType<typeof createWebhookRegistry<W>>;
