/**
 * Options shared by both services' receivers, their defaults, and the checks that run when a
 * receiver is created (a misconfiguration throws there, not on the first delivery).
 */
import type { CapturedDelivery } from '../core/capture.js';
import { toLogSink } from '../core/log-sink.js';
import type { Logger } from '../core/logger.js';
import type { Outcome } from '../core/outcome.js';
import type { PipelineOptions } from '../core/pipeline-options.js';
import { createRouteSecrets, type SecretResolver } from '../core/route-secrets.js';
import type { Telemetry } from '../core/telemetry.js';
import { createMemoryStore } from '../dedup/memory-store.js';
import type { DedupStore } from '../dedup/types.js';
import { checkHandoffTarget, handoffBodyLimit } from '../handoff/job/check-target.js';
import type { HandoffTarget } from '../handoff/job/types.js';
import { DEFAULT_BODY_TIMEOUT_MS } from '../shared/body-errors.js';
import { type Clock, systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { checkSecrets, type Secrets } from '../verify/secrets.js';
import { deliveryInboxOf } from './inbox-receipt.js';

/**
 * Default `maxBodyBytes`: 1 MiB. The specs state no size limit; real deliveries are a few KB.
 */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
/**
 * Default `timeoutMs`: the senders wait 10 s (email §6 rule 3, crm §6 rule 4); 1 s is kept for the answer.
 */
export const DEFAULT_TIMEOUT_MS = 9_000;
/**
 * Default `leaseMs`: 30 s. Longer than the handler deadline (so a running handler is never taken
 * over), and shorter than the email service's first retry (~1 min, email §6 rule 4), so a worker that
 * crashed mid-handler is taken over by that retry.
 */
export const DEFAULT_LEASE_MS = 30_000;
/**
 * Default `storeTimeoutMs`: a dedup store call not answered in 2 s counts as failed (503).
 */
export const DEFAULT_STORE_TIMEOUT_MS = 2_000;
/**
 * Default `maxInFlight`: 256 deliveries awaiting their answer. Measured in docs/benchmarks.md ("Shedding
 * load"): a burst of 2,000 with a handler of a few ms of I/O and some CPU.
 */
export const DEFAULT_MAX_IN_FLIGHT = 256;
/** Defaults of a `secret` function: a 2 s bound per call; answers reused 60 s, for 1 000 routes. */
const SECRET_DEFAULTS = { timeoutMs: 2_000, cacheMs: 60_000, cacheEntries: 1_000 };

/**
 * Options both `createMailReceiver` and `createCrmReceiver` take, in three groups:
 * - **the four to set first**: `secret` (required), `dedup`, `handoff`, `logger`;
 * - **limits**, whose defaults fit the senders' 10-second window: `timeoutMs`, `maxBodyBytes`,
 *   `bodyTimeoutMs`, `maxInFlight`, `leaseMs`, `ttlMs`, `storeTimeoutMs`;
 * - **tests and tooling**: `clock`, `capture`.
 *
 * Each service adds its own (`dedupKey`, `headerNames`, `maxEventAgeMs`; mail `requireBodyEvent`).
 *
 * @example
 * ```ts
 * const common: ReceiverOptions = { secret: process.env.WEBHOOK_SECRET!, dedup, logger, maxBodyBytes: 256 * 1024 };
 * ```
 */
export interface ReceiverOptions {
  /**
   * The webhook secret, or several during a rotation (any of them verifies). Required. Or a function
   * of the request's path and route parameters, never its body, returning the secret(s) of that
   * route: a secret per tenant (docs/receivers-tenants.md).
   */
  secret: Secrets | SecretResolver;
  /** With a `secret` function: bound on each call, in ms; past it, or if it throws, 503 `secret_unavailable`. Default 2 000. */
  secretTimeoutMs?: number;
  /**
   * With a `secret` function: how long its answer for a path is reused (`ttlMs`, default 60 000; 0
   * asks on every request) and for how many paths (`maxEntries`, default 1 000, least recently used
   * out first). A cached answer that fails to verify is asked again (at most once a second per path),
   * so a rotation takes effect at once.
   */
  secretCache?: { ttlMs?: number; maxEntries?: number };
  /** Where claims and completed deliveries are kept. Default: a memory store of this receiver. */
  dedup?: DedupStore;
  /**
   * Hand-off mode (docs/handoff.md): after verify, validate and the dedup key, write the delivery to
   * this queue engine and answer 2xx once it confirmed the write; handlers run in workers
   * (`receiver.runJob`). Default: none, handlers run in the request.
   */
  handoff?: HandoffTarget;
  /**
   * The key of hand-off jobs' MACs (docs/handoff-jobs.md), or several during a
   * rotation: the first signs, every one verifies. Required with a `secret` function and `handoff`
   * (and in their workers), where no single webhook secret may key every tenant's jobs: each tenant
   * holds its own and could sign jobs with it. Give receivers and workers the same list. Without it
   * a receiver's jobs are keyed with the webhook secret that verified them (nothing new to manage).
   * Checked like `secret` (`secret_invalid`); a long random string, never a tenant's webhook secret.
   */
  handoffSecret?: Secrets;
  /**
   * Where log entries go: a function receiving each entry, or pino, winston, bunyan, `console` or any
   * object with `debug/info/warn/error`, as it is (docs/observability.md). Default: warnings and
   * errors on the console, one line each; `false` silences. Never receives a secret or a body.
   */
  logger?: Logger | false;
  /** Handler time budget from the request's arrival, in ms; then `signal` aborts and 503. Default 9 000. */
  timeoutMs?: number;
  /**
   * Largest body accepted, in bytes; larger ones get 413 without being read. Default 1 MiB. With
   * `handoff`, at most 6 MiB (the largest body a hand-off job carries; more is `options_invalid`), and
   * at most the engine's own limit, which is then the default (Cloudflare Queues: 64 KiB).
   */
  maxBodyBytes?: number;
  /**
   * Time allowed to receive the whole body once the headers are in, in ms; past it the request is
   * answered 408 `body_timeout` and the connection closed. Default 5 000.
   */
  bodyTimeoutMs?: number;
  /**
   * Most deliveries in flight at once (from the method check to the verdict: direct mode's handlers,
   * a hand-off or inbox acknowledgement); past it a request is answered 503 `overloaded` with
   * `Retry-After: 1` at once, before its body is read, so a burst does not slow every delivery past the
   * senders' 10 s. Default 256; `false` for no cap. Handlers still running past `timeoutMs` no longer count.
   */
  maxInFlight?: number | false;
  /** How long a claim holds before another attempt may take it over, in ms. Default 30 000. */
  leaseMs?: number;
  /** How long a completed delivery is remembered, in ms. Default per service (mail 90 days, crm 1 day). */
  ttlMs?: number;
  /**
   * Bound on each call to the `dedup` store given, in ms; past it the request fails closed (503, and
   * a claim cut short is abandoned so the sender's retry can run it). Default 2 000. The receiver owns
   * this deadline: it passes it with every call (`callTimeoutMs` in the call's options), and the
   * shipped stores use it instead of their own `callTimeoutMs`, which bounds only calls made directly.
   * Not applied to the default in-process memory store, which cannot hang.
   */
  storeTimeoutMs?: number;
  /** Source of time (epoch ms) for deadlines; default the wall clock. */
  clock?: Clock;
  /**
   * Called once per delivery with its {@link Outcome} (its verdict's kind, code, duration…): in
   * direct mode, at enqueue, and for every job run in a hand-off worker. Called before the answer is
   * sent, so keep it fast; what it throws is logged and never changes the answer.
   */
  onOutcome?: (outcome: Outcome) => void;
  /**
   * Traces and metrics: `createOtelTelemetry()` of `@svc/webhooks/otel` (a span per delivery, the
   * trace carried across the hand-off, `messaging.process.duration`). Default: none, and no cost.
   */
  telemetry?: Telemetry;
  /**
   * Opt-in: called with the exact body bytes and headers of every request within `maxBodyBytes`,
   * before the signature is checked (write them with `formatCaptureLine` for `svc-webhooks replay`).
   * Captures are sensitive data. A hook that throws is logged and never changes the answer.
   */
  capture?: (delivery: CapturedDelivery) => void;
}

/** The options with defaults applied and checked: the pipeline's, and the receiver's own. */
export interface ResolvedOptions extends PipelineOptions {
  readonly onOutcome: ((outcome: Outcome) => void) | undefined;
  readonly handoff: HandoffTarget | undefined;
}

function positiveInteger(factory: string, name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new WebhookError(
      'options_invalid',
      `${factory}: ${name} must be a positive whole number (got ${String(value)}).`,
    );
  }
  return value;
}

/** Applies defaults and validates; throws `secret_invalid` or `options_invalid` at creation. */
export function resolveOptions(
  factory: string,
  options: ReceiverOptions,
  defaultTtlMs: number,
): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw new WebhookError('options_invalid', `${factory}: pass an options object with at least { secret }.`);
  }
  const {
    secret,
    dedup,
    leaseMs = DEFAULT_LEASE_MS,
    ttlMs = defaultTtlMs,
    timeoutMs = DEFAULT_TIMEOUT_MS,
    storeTimeoutMs = DEFAULT_STORE_TIMEOUT_MS,
    // With a hand-off engine that carries less (a message size limit), its limit is the default.
    maxBodyBytes = Math.min(DEFAULT_MAX_BODY_BYTES, handoffBodyLimit(options.handoff)),
    bodyTimeoutMs = DEFAULT_BODY_TIMEOUT_MS,
    maxInFlight = DEFAULT_MAX_IN_FLIGHT,
    logger,
    clock = systemClock,
    capture,
    handoff,
    handoffSecret,
    onOutcome,
    telemetry,
  } = options;
  const resolver = typeof secret === 'function' ? secret : undefined;
  const { list, problem } = resolver ? { list: [], problem: null } : checkSecrets(secret as Secrets);
  if (problem) throw new WebhookError('secret_invalid', `${factory}: ${problem.reason}.`);
  const jobSecrets = handoffSecret === undefined ? { list: [], problem: null } : checkSecrets(handoffSecret);
  if (jobSecrets.problem)
    throw new WebhookError('secret_invalid', `${factory}: handoffSecret: ${jobSecrets.problem.reason}.`);
  positiveInteger(factory, 'leaseMs', leaseMs);
  positiveInteger(factory, 'ttlMs', ttlMs);
  positiveInteger(factory, 'timeoutMs', timeoutMs);
  positiveInteger(factory, 'storeTimeoutMs', storeTimeoutMs);
  positiveInteger(factory, 'maxBodyBytes', maxBodyBytes);
  positiveInteger(factory, 'bodyTimeoutMs', bodyTimeoutMs);
  if (maxInFlight !== false && !(Number.isSafeInteger(maxInFlight) && maxInFlight > 0)) {
    throw new WebhookError(
      'options_invalid',
      `${factory}: maxInFlight must be a positive whole number, or false for no cap (got ${String(maxInFlight)}).`,
    );
  }
  if (leaseMs <= timeoutMs) {
    // A lease that ends while its handler may still run lets a retry run the handler a second time.
    throw new WebhookError(
      'options_invalid',
      `${factory}: leaseMs (${leaseMs}) must be longer than timeoutMs (${timeoutMs}) so a running handler keeps its claim.`,
    );
  }
  if (
    dedup !== undefined &&
    (typeof dedup?.claim !== 'function' ||
      typeof dedup.complete !== 'function' ||
      typeof dedup.release !== 'function')
  ) {
    throw new WebhookError(
      'options_invalid',
      `${factory}: dedup must be a DedupStore (claim, complete, release).`,
    );
  }
  const sink = toLogSink(factory, logger);
  if (onOutcome !== undefined && typeof onOutcome !== 'function') {
    throw new WebhookError(
      'options_invalid',
      `${factory}: onOutcome must be a function receiving one outcome.`,
    );
  }
  if (
    telemetry !== undefined &&
    (typeof telemetry !== 'object' ||
      telemetry === null ||
      (['enabled', 'trace', 'traceparent', 'outcome', 'deadLetter'] as const).some(
        (member) => typeof telemetry[member] !== 'function',
      ))
  ) {
    throw new WebhookError(
      'options_invalid',
      `${factory}: telemetry must have enabled, trace, traceparent, outcome and deadLetter methods (e.g. createOtelTelemetry() of @svc/webhooks/otel).`,
    );
  }
  if (capture !== undefined && typeof capture !== 'function') {
    throw new WebhookError(
      'options_invalid',
      `${factory}: capture must be a function receiving one delivery.`,
    );
  }
  if (typeof clock?.now !== 'function') {
    throw new WebhookError(
      'options_invalid',
      `${factory}: clock must have a now() method returning epoch ms.`,
    );
  }
  if ((typeof clock.setTimeout === 'function') !== (typeof clock.clearTimeout === 'function')) {
    // A timer that cannot be cancelled would fire for every delivery that already finished.
    throw new WebhookError(
      'options_invalid',
      `${factory}: clock must have both setTimeout() and clearTimeout() to run the deadlines, or neither.`,
    );
  }
  if (resolver && handoff !== undefined && !deliveryInboxOf(handoff) && handoffSecret === undefined) {
    // Each tenant holds its own webhook secret: a job key derived from one would let that tenant
    // sign jobs of every other (docs/security.md "Hand-off threat model"). The database inbox needs
    // none: its worker verifies each row's stored signature again with its route's secrets.
    throw new WebhookError(
      'options_invalid',
      `${factory}: a secret function with handoff to a queue engine needs handoffSecret, the key of the jobs' MACs (a secret of its own, the same in the workers).`,
    );
  }
  return {
    secrets: Object.freeze(list.slice()),
    handoffSecrets: Object.freeze(jobSecrets.list.slice()),
    routeSecrets: resolver && createRouteSecrets(resolver, secretLimits(factory, options, clock)),
    dedup: dedup ?? createMemoryStore({ clock }),
    leaseMs,
    ttlMs,
    timeoutMs,
    storeTimeoutMs,
    maxBodyBytes,
    bodyTimeoutMs,
    maxInFlight: maxInFlight === false ? Number.POSITIVE_INFINITY : maxInFlight,
    logger: sink,
    onOutcome,
    telemetry,
    clock,
    capture,
    handoff: checkHandoffTarget(factory, handoff, maxBodyBytes),
  };
}

/** The limits of a `secret` function, checked. */
function secretLimits(factory: string, options: ReceiverOptions, clock: Clock) {
  const { secretTimeoutMs = SECRET_DEFAULTS.timeoutMs, secretCache = {} } = options;
  const { ttlMs = SECRET_DEFAULTS.cacheMs, maxEntries = SECRET_DEFAULTS.cacheEntries } = secretCache ?? {};
  positiveInteger(factory, 'secretTimeoutMs', secretTimeoutMs);
  positiveInteger(factory, 'secretCache.maxEntries', maxEntries);
  if (ttlMs !== 0) positiveInteger(factory, 'secretCache.ttlMs', ttlMs);
  return { clock, timeoutMs: secretTimeoutMs, cacheMs: ttlMs, cacheEntries: maxEntries };
}
