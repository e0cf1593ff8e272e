/**
 * The dedup key strategies both receivers share: `'delivery-id'`, a user's function, and the frame
 * of a service's own named strategies. Every key is namespaced by its service and bounded.
 */
import { WebhookError } from '../shared/errors.js';
import { boundDedupKey } from './bound-key.js';

/** `<service>:delivery:<id>`, bounded: the dedup key of the `'delivery-id'` strategy. */
export function dedupKeyOfDeliveryId(service: string, deliveryId: string): string {
  return boundDedupKey(service, `${service}:delivery:${deliveryId}`);
}

/**
 * The key function of `strategy`: `'delivery-id'`, a user's function (its result checked), or one of
 * the service's `named` strategies, which return the key or `undefined` to fall back to the delivery
 * id. Keys are prefixed `<service>:`. Throws `options_invalid` for any other name.
 */
export function dedupKeyOf<E extends { readonly deliveryId: string }>(
  service: string,
  strategy: string | ((event: E) => string),
  named: Readonly<Record<string, (event: E) => string | undefined>> = {},
): (event: E) => string {
  if (typeof strategy === 'function') {
    return (event) => {
      const key: unknown = strategy(event);
      if (typeof key !== 'string' || key.length === 0) {
        throw new TypeError(`the dedupKey function returned ${typeof key}, not a non-empty string`);
      }
      return boundDedupKey(service, `${service}:${key}`);
    };
  }
  if (strategy === 'delivery-id') return (event) => dedupKeyOfDeliveryId(service, event.deliveryId);
  // Own names only: `'toString'` is no strategy.
  const keyOf = Object.hasOwn(named, strategy) ? named[strategy] : undefined;
  if (keyOf === undefined) {
    const names = ['delivery-id', ...Object.keys(named)].map((name) => `'${name}'`).join(', ');
    throw new WebhookError(
      'options_invalid',
      `dedupKey must be ${names} or a function (got ${String(strategy)}).`,
    );
  }
  return (event) => {
    const key = keyOf(event);
    return key === undefined
      ? dedupKeyOfDeliveryId(service, event.deliveryId)
      : boundDedupKey(service, `${service}:${key}`);
  };
}
