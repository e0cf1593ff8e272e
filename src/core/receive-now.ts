/**
 * @module
 * Internal: a receiver's `receive` that returns the outcome itself when the whole pipeline finished
 * synchronously (Node crypto, the memory store, synchronous handlers) and a promise otherwise. The
 * Node adapters use it to write the response without waiting a microtask; everyone else uses
 * `receive()`, which is the same function wrapped in a promise. Not part of the public API.
 */
import type { Awaitable } from './awaitable.js';
import type { ReceiveInput, ReceiveOutcome, WebhookReceiverLike } from './receiver-types.js';

/** Never throws and never rejects, like `receive()`. */
export type ReceiveNow = (input: ReceiveInput) => Awaitable<ReceiveOutcome>;

/** The property a receiver keeps its {@link ReceiveNow} under (non-enumerable). */
export const receiveNowKey: unique symbol = Symbol('svc.webhooks.receiveNow');

/** Attaches `now` to `receiver` under {@link receiveNowKey} and returns `receiver`. */
export function withReceiveNow<R extends WebhookReceiverLike>(receiver: R, now: ReceiveNow): R {
  Object.defineProperty(receiver, receiveNowKey, { value: now, enumerable: false });
  return receiver;
}

/** The receiver's {@link ReceiveNow}, or its `receive()` for receivers built elsewhere. */
export function receiveNowOf(receiver: WebhookReceiverLike): ReceiveNow {
  const now = (receiver as { [receiveNowKey]?: ReceiveNow })[receiveNowKey];
  return (
    now ??
    ((input) => {
      try {
        return receiver.receive(input);
      } catch (error) {
        return Promise.reject(error);
      }
    })
  );
}
