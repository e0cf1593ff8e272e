import { dedupKeyOfDeliveryId } from '../dedup/key-strategy.js';
import type { DedupStore } from '../dedup/types.js';
import { WebhookError } from '../shared/errors.js';
import type { DeliveryHolder } from './reconcile-types.js';

/**
 * A receiver's dedup store as a reconciler's holder. The contract has no read, so each key is probed
 * with a short claim: completed or in progress is held; a free key is released at once.
 *
 * @example
 * ```ts
 * import { createMailClient, createReconciler, createStoreHolder } from '@svc/webhooks/manage';
 * import { createRedisStore } from '@svc/webhooks/redis';
 * import { Redis } from 'ioredis';
 *
 * const store = createRedisStore({ client: new Redis(process.env.REDIS_URL!) });
 * const client = createMailClient({ baseUrl: 'https://api.svcmail.example', apiKey: process.env.SVC_MAIL_API_KEY! });
 * createReconciler({ client, holder: createStoreHolder(store), lock: store }).start();
 * ```
 */
export function createStoreHolder(
  store: DedupStore,
  options: {
    /**
     * The receiver's dedup key strategy. Only `'delivery-id'` (the default) keys a record by what the
     * delivery log shows; with `'message-event'` or a function, the key cannot be told from the log,
     * and the call throws `options_invalid` (use the inbox, or a holder of your own).
     */
    dedupKey?: string | ((...args: never[]) => string);
    /** How long a probe holds a key it finds free before it lets go (it releases it at once). Default 5 000. */
    probeLeaseMs?: number;
  } = {},
): DeliveryHolder {
  const { dedupKey = 'delivery-id', probeLeaseMs = 5_000 } = options;
  if (dedupKey !== 'delivery-id') {
    throw new WebhookError(
      'options_invalid',
      "createStoreHolder: with a dedup key other than 'delivery-id' the store's records cannot be found from the delivery log's ids; reconcile against the inbox, or pass a holder of your own.",
    );
  }
  if (!Number.isSafeInteger(probeLeaseMs) || probeLeaseMs < 1) {
    throw new WebhookError('options_invalid', 'createStoreHolder: probeLeaseMs must be a whole number ≥ 1.');
  }
  return {
    async held(service, deliveryIds) {
      const held = new Set<string>();
      for (const deliveryId of new Set(deliveryIds)) {
        const key = dedupKeyOfDeliveryId(service, deliveryId);
        const probe = await store.claim(key, { leaseMs: probeLeaseMs });
        if (probe.status === 'claimed') await store.release(key, probe.token);
        else held.add(deliveryId);
      }
      return held;
    },
  };
}
