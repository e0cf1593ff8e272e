import { WebhookError } from '../../shared/errors.js';
import type { LiveDelivery } from './engine.js';

/**
 * Deliveries by id and by webhook, newest last. `retentionMs` drops deliveries whose every attempt
 * is older (email-service §8: 90 days); `perWebhook` keeps only the most recent (crm-service §8: 50).
 */
export function createDeliveryLog(options: { now: () => number; retentionMs?: number; perWebhook?: number }) {
  const { now, retentionMs = Number.POSITIVE_INFINITY, perWebhook = Number.POSITIVE_INFINITY } = options;
  const byId = new Map<string, LiveDelivery>();
  const byWebhook = new Map<string, LiveDelivery[]>();

  function lastActivity(delivery: LiveDelivery): number {
    const last = delivery.record.attempts.at(-1);
    return last ? Date.parse(last.attemptedAt) : delivery.createdAtMs;
  }

  function prune(webhookId: string): LiveDelivery[] {
    const list = byWebhook.get(webhookId) ?? [];
    const cutoff = now() - retentionMs;
    const kept = list.filter((d) => d.record.status === 'pending' || lastActivity(d) >= cutoff);
    while (kept.length > perWebhook) kept.shift();
    if (kept.length !== list.length) {
      const keep = new Set(kept);
      for (const d of list) if (!keep.has(d)) byId.delete(d.record.id);
      byWebhook.set(webhookId, kept);
    }
    return kept;
  }

  return {
    add(delivery: LiveDelivery): void {
      byId.set(delivery.record.id, delivery);
      const list = byWebhook.get(delivery.record.webhookId) ?? [];
      list.push(delivery);
      byWebhook.set(delivery.record.webhookId, list);
      if (list.length > perWebhook) prune(delivery.record.webhookId);
    },
    /** The deliveries of a webhook still retained, oldest first. */
    list(webhookId: string): LiveDelivery[] {
      return prune(webhookId);
    },
    /** A retained delivery, or `delivery_not_found`. */
    get(deliveryId: string, webhookId?: string): LiveDelivery {
      const delivery = byId.get(deliveryId);
      if (delivery) prune(delivery.record.webhookId);
      if (
        !delivery ||
        !byId.has(deliveryId) ||
        (webhookId !== undefined && delivery.record.webhookId !== webhookId)
      ) {
        throw new WebhookError(
          'delivery_not_found',
          `No delivery ${deliveryId} is on record for this webhook.`,
        );
      }
      return delivery;
    },
    /** Forgets a deleted webhook's deliveries; returns them so pending retries can be cancelled. */
    drop(webhookId: string): LiveDelivery[] {
      const list = byWebhook.get(webhookId) ?? [];
      for (const d of list) byId.delete(d.record.id);
      byWebhook.delete(webhookId);
      return list;
    },
  };
}
