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
  /** Set when the payload failed its schema and the app's `repair` made it valid (core/repair.ts). */
  repaired?: true | undefined;
}

/** A new facts record of one delivery, every field present (one shape for every delivery). */
export function newFacts(): DeliveryFacts {
  return {
    drift: undefined,
    receivedAt: undefined,
    eventAt: undefined,
    handlersAt: undefined,
    repaired: undefined,
  };
}

/**
 * The epoch ms of a signed ISO 8601 `timestamp`, or undefined for none or one that does not parse.
 * The services' own form (`2025-06-02T09:00:00.123Z`, both specs: UTC with milliseconds) is read
 * digit by digit: `Date.parse` was most of what the lag cost per delivery (docs/observability.md
 * "Cost"); any other form, and a day past the 28th, goes to `Date.parse`, which the fast path agrees
 * with (test/core/lag.test.ts).
 */
export function eventTimeOf(timestamp: unknown): number | undefined {
  if (typeof timestamp !== 'string') return undefined;
  const at = servicesForm(timestamp);
  if (at !== undefined) return at;
  const parsed = Date.parse(timestamp);
  return Number.isFinite(parsed) ? parsed : undefined;
}

/** Digits `from`…`to` (exclusive) of `text` as a number, or -1 when one is not a digit. */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** `YYYY-MM-DDTHH:MM:SS.sssZ` with every field in range as epoch ms; undefined for anything else. */
function servicesForm(t: string): number | undefined {
  if (t.length !== 24 || t.charCodeAt(23) !== 90 /* Z */ || t.charCodeAt(10) !== 84 /* T */) return undefined;
  if (t.charCodeAt(4) !== 45 || t.charCodeAt(7) !== 45) return undefined; // -
  if (t.charCodeAt(13) !== 58 || t.charCodeAt(16) !== 58 || t.charCodeAt(19) !== 46) return undefined; // : : .
  const year = digits(t, 0, 4);
  const month = digits(t, 5, 7);
  const day = digits(t, 8, 10);
  const hour = digits(t, 11, 13);
  const minute = digits(t, 14, 16);
  const second = digits(t, 17, 19);
  const ms = digits(t, 20, 23);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 28) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0)
    return undefined;
  // Days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  const days = era * 146_097 + doe - 719_468;
  return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1_000 + ms;
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
