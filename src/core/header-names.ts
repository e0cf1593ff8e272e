import { WebhookError } from '../shared/errors.js';

/**
 * The three headers both services send, by role; the values are header names.
 *
 * @example
 * ```ts
 * import type { HeaderNames } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: HeaderNames): HeaderNames {
 *   return value;
 * }
 * ```
 */
export interface HeaderNames {
  event: string;
  signature: string;
  deliveryId: string;
}

/**
 * A resolver of one service's header names: its defaults with a user's renames applied, validated and
 * lowercased once. A resolved object passed back in (receiver → parser) is returned as it is, so a
 * parser called per request costs one `WeakSet` lookup.
 */
export function headerNameResolver(
  defaults: Readonly<HeaderNames>,
): (overrides?: Partial<HeaderNames>) => Readonly<HeaderNames> {
  const resolved = new WeakSet<object>();
  const remember = (names: HeaderNames): Readonly<HeaderNames> => {
    const frozen = Object.freeze(names);
    resolved.add(frozen);
    return frozen;
  };
  const defaultLower = remember(lower(defaults));
  return (overrides) => {
    if (overrides === undefined) return defaultLower;
    if (resolved.has(overrides)) return overrides as HeaderNames;
    const renamed = Object.entries(overrides).filter(([, name]) => name !== undefined);
    return remember(lower({ ...defaults, ...Object.fromEntries(renamed) }));
  };
}

function lower(names: HeaderNames): HeaderNames {
  for (const [key, value] of Object.entries(names)) {
    if (typeof value !== 'string' || value.trim().length === 0) {
      throw new WebhookError('options_invalid', `headerNames.${key} must be a non-empty header name.`);
    }
  }
  return {
    event: names.event.toLowerCase(),
    signature: names.signature.toLowerCase(),
    deliveryId: names.deliveryId.toLowerCase(),
  };
}
