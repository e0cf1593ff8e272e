/**
 * Handlers by event name, plus the catch-all, unknown-event, error and invalid-payload hooks. The
 * per-name lists (specific handlers, then `onAny` ones) are built once and cached, so dispatch is a
 * map lookup.
 */
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
  if (typeof value !== 'function') throw new TypeError(`${method}: the handler must be a function.`);
}

/** A registry; `isKnownName` rejects `on('typo', …)` at runtime for JavaScript callers. */
export function createHandlerRegistry(isKnownName: (name: string) => boolean): HandlerRegistry {
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
        throw new TypeError('on: give an event name or a non-empty array of event names.');
      }
      for (const name of list) {
        if (typeof name !== 'string' || !isKnownName(name)) {
          throw new TypeError(
            `on: "${String(name)}" is not an event name of this service; use onUnknown for others.`,
          );
        }
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
