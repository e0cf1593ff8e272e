/**
 * A delivery's lag, for `onOutcome` and the telemetry: event age at receipt (the signed body
 * `timestamp` → receipt), queue wait (receipt → its handlers' start in a worker), handler duration
 * and end to end (the `timestamp` → handled). Computed only for a receiver that reports outcomes,
 * from the few times the receive path and the workers note in a {@link DeliveryFacts}: numbers of
 * the receiver's `clock`, never a `Date` (docs/observability.md "Lag").
 */
import type { Outcome } from './outcome.js';
import type { Verdict } from './verdict.js';

/** What the receive path and a worker tell the outcome reporting about one delivery besides its verdict. */
export interface DeliveryFacts {
  /** The payload's unknown paths (core/drift.ts), when it had any. */
  drift?: readonly string[] | undefined;
  /**
   * When the delivery was received, epoch ms: the request's body read, or in a worker the receipt
   * its job (under the job's MAC) or its inbox row holds.
   */
  receivedAt?: number | undefined;
  /** The signed body `timestamp`, epoch ms; undefined when the event carries none (or no valid one). */
  eventAt?: number | undefined;
  /** When the handlers started (the claim held), epoch ms; undefined when none ran. */
  handlersAt?: number | undefined;
}

/** A new facts record of one delivery, every field present (one shape for every delivery). */
export function newFacts(): DeliveryFacts {
  return { drift: undefined, receivedAt: undefined, eventAt: undefined, handlersAt: undefined };
}

/** The epoch ms of a signed ISO 8601 `timestamp`, or undefined for none or one that does not parse. */
export function eventTimeOf(timestamp: unknown): number | undefined {
  if (typeof timestamp !== 'string') return undefined;
  const at = Date.parse(timestamp);
  return Number.isFinite(at) ? at : undefined;
}

/** The lag fields of an {@link Outcome}. */
export type Lag = Pick<Outcome, 'eventAgeMs' | 'clockAhead' | 'queueWaitMs' | 'handlerMs' | 'endToEndMs'>;

/**
 * The lag of a delivery judged `kind` in `mode` at `doneAt` (epoch ms). A span whose end lies before
 * its start (the sender's clock ahead, a worker's clock behind its receiver's) counts as 0; at
 * receipt, a timestamp ahead of the receipt is flagged `clockAhead`.
 */
export function lagOf(
  facts: DeliveryFacts,
  mode: Outcome['mode'],
  kind: Verdict['kind'],
  doneAt: number,
): Lag {
  const { receivedAt, eventAt, handlersAt } = facts;
  const atReceipt = mode !== 'worker' && receivedAt !== undefined && eventAt !== undefined;
  return {
    eventAgeMs: atReceipt ? Math.max(0, receivedAt - eventAt) : undefined,
    clockAhead: atReceipt ? eventAt > receivedAt : undefined,
    queueWaitMs:
      mode === 'worker' && handlersAt !== undefined && receivedAt !== undefined
        ? Math.max(0, handlersAt - receivedAt)
        : undefined,
    handlerMs: handlersAt === undefined ? undefined : Math.max(0, doneAt - handlersAt),
    endToEndMs: kind === 'handled' && eventAt !== undefined ? Math.max(0, doneAt - eventAt) : undefined,
  };
}
