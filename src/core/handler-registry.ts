/**
 * Handlers by event name, plus the catch-all, unknown-event, error and invalid-payload hooks. The
 * per-name lists (specific handlers, then `onAny` ones) are built once and cached, so dispatch is a
 * map lookup.
 */
import { WebhookError } from '../shared/errors.js';
import type { ErrorHook, InvalidHook, WebhookHandler } from './handler-types.js';

/** The minimum an event must have for dispatch: its name and whether the library knows it. */
export interface DispatchableEvent {
  readonly name: string;
  readonly known: boolean;
  readonly deliveryId: string;
}

type AnyHandler = WebhookHandler<never>;

/** The registry behind a receiver's `on`, `onAny`, `onUnknown`, `onError` and `onInvalid`. */
export interface HandlerRegistry {
  on(names: string | readonly string[], handler: AnyHandler): void;
  onAny(handler: AnyHandler): void;
  onUnknown(handler: AnyHandler): void;
  onError(hook: ErrorHook<never>): void;
  onInvalid(hook: InvalidHook): void;
  /** The handlers to run for `event`, in order; empty when it is to be ignored. */
  handlersFor(event: DispatchableEvent): readonly WebhookHandler<DispatchableEvent>[];
  readonly errorHooks: readonly ErrorHook<DispatchableEvent>[];
  readonly invalidHooks: readonly InvalidHook[];
}

function assertFunction(value: unknown, method: string): void {
  if (typeof value !== 'function')
    throw new WebhookError('options_invalid', `${method}: the handler must be a function.`);
}

/** Edit distance of two short names (event names are under 30 characters). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The known names a typo most likely meant: the closest in spelling (within a third of its length),
 * else those containing it or contained in it (`won` -> `deal.won`).
 */
export function closeNames(name: string, knownNames: readonly string[]): string[] {
  const typed = name.toLowerCase();
  const limit = Math.max(2, Math.floor(typed.length / 3));
  const distances = knownNames.map((known) => distance(typed, known.toLowerCase()));
  const best = Math.min(...distances);
  if (best <= limit) return knownNames.filter((_, i) => distances[i] === best);
  if (typed.length < 3) return [];
  return knownNames.filter((known) => {
    const candidate = known.toLowerCase();
    return candidate.includes(typed) || typed.includes(candidate);
  });
}

function unknownName(name: unknown, knownNames: readonly string[]): WebhookError {
  const typed = typeof name === 'string' ? name : '';
  // Bounded: a name comes from the developer's code, but an absurd one must not make a huge message.
  const shown = typeof name === 'string' ? JSON.stringify(name.slice(0, 64)) : `a ${typeof name}`;
  const close = typed.length > 0 && typed.length <= 64 ? closeNames(typed, knownNames) : [];
  const hint =
    close.length > 0
      ? `did you mean ${close.map((n) => `"${n}"`).join(' or ')}?`
      : `the names are ${knownNames.map((n) => `"${n}"`).join(', ')}.`;
  return new WebhookError(
    'options_invalid',
    `on: ${shown} is not an event name of this service (use onUnknown for events the library does not know); ${hint}`,
  );
}

/** A registry; `knownNames` rejects `on('typo', …)` at runtime for JavaScript callers. */
export function createHandlerRegistry(knownNames: readonly string[]): HandlerRegistry {
  const known: ReadonlySet<string> = new Set(knownNames);
  const byName = new Map<string, AnyHandler[]>();
  const any: AnyHandler[] = [];
  const unknown: AnyHandler[] = [];
  const errorHooks: ErrorHook<never>[] = [];
  const invalidHooks: InvalidHook[] = [];
  let combined = new Map<string, readonly AnyHandler[]>();
  const none: readonly AnyHandler[] = Object.freeze([]);

  return {
    on(names, handler) {
      assertFunction(handler, 'on');
      const list = typeof names === 'string' ? [names] : names;
      if (!Array.isArray(list) || list.length === 0) {
        throw new WebhookError(
          'options_invalid',
          'on: give an event name or a non-empty array of event names.',
        );
      }
      for (const name of list) {
        if (typeof name !== 'string' || !known.has(name)) throw unknownName(name, knownNames);
      }
      for (const name of new Set(list)) {
        const handlers = byName.get(name) ?? [];
        handlers.push(handler);
        byName.set(name, handlers);
      }
      combined = new Map();
    },
    onAny(handler) {
      assertFunction(handler, 'onAny');
      any.push(handler);
      combined = new Map();
    },
    onUnknown(handler) {
      assertFunction(handler, 'onUnknown');
      unknown.push(handler);
    },
    onError(hook) {
      assertFunction(hook, 'onError');
      errorHooks.push(hook);
    },
    onInvalid(hook) {
      assertFunction(hook, 'onInvalid');
      invalidHooks.push(hook);
    },
    handlersFor(event) {
      if (!event.known) return unknown as unknown as readonly WebhookHandler<DispatchableEvent>[];
      let handlers = combined.get(event.name);
      if (handlers === undefined) {
        const specific = byName.get(event.name);
        handlers = specific || any.length > 0 ? [...(specific ?? []), ...any] : none;
        combined.set(event.name, handlers);
      }
      return handlers as unknown as readonly WebhookHandler<DispatchableEvent>[];
    },
    errorHooks: errorHooks as unknown as readonly ErrorHook<DispatchableEvent>[],
    invalidHooks,
  };
}
