/**
 * The app's repair of a drifted payload (docs/inbox.md "When the payload changes"): when a verified
 * delivery of a known event fails its schema (`invalid_payload`), the repair the app registered for
 * that event gets the payload as sent and the schema's issues, and returns a corrected payload (or
 * `undefined`: not this one). The correction is validated by the same schema and parsed as the
 * delivery, so the handlers still get the typed event; the event name, delivery id and everything the
 * service signed besides the repaired part stay as received. One wrapper around a service's parse, so
 * receipt, an inbox worker's re-drive and a hand-off worker all repair alike.
 */
import type { $ZodError } from 'zod/v4/core';
import { isWebhookError, WebhookError } from '../shared/errors.js';
import type { DispatchableEvent } from './handler-registry.js';
import type { ServiceSpec } from './service-spec.js';

/** One issue of the schema, as a repair gets it: where and what, never the value. */
export interface RepairIssue {
  readonly path: readonly (string | number)[];
  readonly code: string;
}

/** A repair as the core calls it: the repaired part as sent, the issues; the correction or undefined. */
export type PayloadRepair = (raw: Record<string, unknown>, issues: readonly RepairIssue[]) => unknown;

/** What a service lets a repair change: the part it gets (the email payload, the CRM `data`), and the body with the correction put back. */
export interface RepairSeam<E> {
  raw(read: E): unknown;
  body(read: E, corrected: Record<string, unknown>): Uint8Array;
}

/** Issues handed to a repair at most: a payload failing more is not one field renamed. */
const MAX_ISSUES = 100;

/** Events that a repair made valid (the receive path and the inbox's runs read it to report it). */
const repaired = new WeakSet<object>();

/** Whether `event` parsed only after the app's repair. */
export const wasRepaired = (event: object): boolean => repaired.has(event);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The repairs of a receiver's `repair` option, checked when it is created: an object of functions keyed
 * by event names this version knows (`options_invalid` otherwise). Undefined when there are none.
 */
export function checkRepairs(
  factory: string,
  repairs: unknown,
  knownNames: readonly string[],
): ReadonlyMap<string, PayloadRepair> | undefined {
  if (repairs === undefined) return undefined;
  if (!isObject(repairs))
    throw new WebhookError(
      'options_invalid',
      `${factory}: repair must be an object of functions keyed by event name.`,
    );
  const checked = new Map<string, PayloadRepair>();
  for (const [name, repair] of Object.entries(repairs)) {
    if (repair === undefined) continue;
    if (!knownNames.includes(name))
      throw new WebhookError(
        'options_invalid',
        `${factory}: repair.${name}: not an event this version knows (an unknown event has no schema to fail: use onUnknown).`,
      );
    if (typeof repair !== 'function')
      throw new WebhookError('options_invalid', `${factory}: repair.${name} must be a function.`);
    checked.set(name, repair as PayloadRepair);
  }
  return checked.size === 0 ? undefined : checked;
}

function issuesOf(error: WebhookError): RepairIssue[] {
  const zod = error.cause as Partial<$ZodError> | undefined;
  return (zod?.issues ?? []).slice(0, MAX_ISSUES).map((issue) => ({
    path: issue.path.filter((key): key is string | number => typeof key !== 'symbol'),
    code: issue.code,
  }));
}

/** A thrown value's kind, for a message: its name, never its message (it may quote the payload). */
const kindOf = (thrown: unknown): string =>
  thrown instanceof Error ? thrown.name : thrown === null ? 'null' : typeof thrown;

function repairFailed(name: string, what: string, cause: unknown): WebhookError {
  return new WebhookError(
    'repair_failed',
    `The app's repair of ${name} ${what}; the delivery is kept as it was sent.`,
    { cause },
  );
}

/**
 * `spec.parse`, with each of `repairs` tried on the deliveries of its event that fail the schema.
 * Throws what the parse throws; `repair_failed` for a repair that threw or returned no object (or an
 * unserialisable one); `invalid_payload` (its issues those of the correction) for a correction the
 * schema still refuses.
 */
export function repairingParse<E extends DispatchableEvent>(
  spec: Pick<ServiceSpec<E>, 'parse' | 'unvalidated'>,
  seam: RepairSeam<E>,
  repairs: ReadonlyMap<string, PayloadRepair>,
): ServiceSpec<E>['parse'] {
  const { parse, unvalidated } = spec;
  return (body, headers, secretIndex, receivedAt) => {
    try {
      return parse(body, headers, secretIndex, receivedAt);
    } catch (error) {
      if (!isWebhookError(error) || error.code !== 'invalid_payload') throw error;
      const read = unvalidated?.(body, headers, secretIndex);
      const repair = read && repairs.get(read.name);
      const raw = read && seam.raw(read);
      if (!repair || !isObject(raw)) throw error;
      let bytes: Uint8Array;
      try {
        const corrected = repair(raw, issuesOf(error));
        if (corrected === undefined) throw error;
        if (!isObject(corrected))
          throw repairFailed(read.name, `returned ${kindOf(corrected)}, not an object`, undefined);
        bytes = seam.body(read, corrected);
      } catch (thrown) {
        if (thrown === error || (isWebhookError(thrown) && thrown.code === 'repair_failed')) throw thrown;
        throw repairFailed(read.name, `threw (${kindOf(thrown)})`, thrown);
      }
      let event: E;
      try {
        event = parse(bytes, headers, secretIndex, receivedAt);
      } catch (again) {
        if (!isWebhookError(again) || again.code !== 'invalid_payload') throw again;
        throw new WebhookError(
          'invalid_payload',
          `${again.message.replace(/\.$/, '')}, after the app's repair.`,
          {
            cause: again.cause,
          },
        );
      }
      repaired.add(event);
      return event;
    }
  };
}

/** `spec` with the receiver's `repair` option (checked here) applied to its parse. */
export function withRepairs<E extends DispatchableEvent>(
  factory: string,
  spec: ServiceSpec<E>,
  seam: RepairSeam<E>,
  option: unknown,
): ServiceSpec<E> {
  const repairs = checkRepairs(factory, option, spec.knownNames);
  return repairs ? { ...spec, parse: repairingParse(spec, seam, repairs) } : spec;
}
