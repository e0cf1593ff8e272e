import { toLogSink } from '../core/log-sink.js';
import { emit } from '../core/logger.js';
import { systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import type { Timers } from './reconcile-lock.js';
import { logReport } from './reconcile-log.js';
import { type Awaiting, type PassSettings, reconcilePass } from './reconcile-pass.js';
import type { ReconcileReport, ReconcilerOptions } from './reconcile-types.js';

const MINUTE = 60_000;

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new WebhookError('options_invalid', `createReconciler: ${name} must be a whole number of ms ≥ 1.`);
  }
  return value;
}

/**
 * Checks on a schedule that every delivery the service made reached the receiver: each pass compares
 * a window of the delivery log with the `holder`; email deliveries missing are resent once (a paused
 * webhook reactivated first), CRM ones reported. Passes take turns in `lock` (docs/manage.md
 * "Reconcile on a schedule").
 *
 * @example
 * ```ts
 * import { createMailClient, createReconciler } from '@svc/webhooks/manage';
 * import { createPostgresInbox, createPostgresStore } from '@svc/webhooks/postgres';
 * import pg from 'pg';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const reconciler = createReconciler({
 *   client: createMailClient({ baseUrl: 'https://api.svcmail.example', apiKey: process.env.SVC_MAIL_API_KEY! }),
 *   holder: createPostgresInbox({ client: pool }),
 *   lock: createPostgresStore({ client: pool }),
 *   everyMs: 10 * 60_000,
 *   onReport: (report) => console.log(report.status, report.counts),
 * });
 * reconciler.start();
 * process.once('SIGTERM', () => void reconciler.stop());
 * ```
 */
export function createReconciler(options: ReconcilerOptions): {
  /** Runs one pass now (or joins the one running) and resolves its report. */
  runOnce(): Promise<ReconcileReport>;
  /** Starts the schedule: a pass now, then one every `everyMs` (after a backoff when unreachable). */
  start(): void;
  /** Stops the schedule; resolves once a running pass has finished. */
  stop(): Promise<void>;
} {
  const {
    client,
    holder,
    lock,
    everyMs = 10 * MINUTE,
    lookbackMs = 24 * 60 * MINUTE,
    settleMs = 3 * MINUTE,
    webhookIds,
    reactivate = true,
    maxPages = 1_000,
    clock = systemClock,
    backoff = {},
    lockLeaseMs = 5 * MINUTE,
    logger,
    onReport,
  } = options;
  if (client?.service !== 'mail' && client?.service !== 'crm') {
    throw new WebhookError(
      'options_invalid',
      'createReconciler: `client` must come from createMailClient or createCrmClient.',
    );
  }
  if (typeof holder?.held !== 'function' || typeof lock?.claim !== 'function') {
    throw new WebhookError(
      'options_invalid',
      'createReconciler needs a `holder` (held) and a `lock` (a DedupStore).',
    );
  }
  for (const [name, value] of Object.entries({ everyMs, lookbackMs, lockLeaseMs, maxPages }))
    positive(name, value);
  if (!Number.isSafeInteger(settleMs) || settleMs < 0) {
    throw new WebhookError('options_invalid', 'createReconciler: settleMs must be a whole number of ms ≥ 0.');
  }
  const initialMs = positive('backoff.initialMs', backoff.initialMs ?? 5_000);
  const maxMs = positive('backoff.maxMs', backoff.maxMs ?? Math.min(5 * MINUTE, everyMs));
  const log = toLogSink('createReconciler', logger);
  const timers: Timers = clock.setTimeout
    ? {
        set: (callback, ms) => clock.setTimeout!(callback, ms),
        clear: (handle) => clock.clearTimeout?.(handle),
      }
    : { set: (callback, ms) => setTimeout(callback, ms), clear: (handle) => clearTimeout(handle as never) };
  const settings: PassSettings = {
    client,
    holder,
    lock,
    webhookIds,
    reactivate,
    maxPages,
    lockLeaseMs,
    windowTtlMs: 2 * everyMs,
    markTtlMs: lookbackMs + everyMs,
    timers,
    now: () => clock.now(),
  };
  const awaiting: Awaiting = new Map();
  let running: Promise<ReconcileReport> | null = null;
  let timer: unknown;
  let started = false;
  let failures = 0;

  /** How long until the next pass after `report`: the schedule, or a backoff. */
  function delayAfter(report: ReconcileReport, resetAt: number | null, startedAt: number): number {
    const now = clock.now();
    if (report.status === 'unreachable' || (resetAt !== null && report.status === 'stopped')) {
      failures++;
      return resetAt !== null
        ? Math.max(1_000, resetAt - now)
        : Math.min(maxMs, initialMs * 2 ** (failures - 1));
    }
    failures = 0;
    return Math.max(0, startedAt + everyMs - now);
  }

  async function pass(): Promise<ReconcileReport> {
    const startedAt = clock.now();
    // The window ends `settleMs` before now, aligned to the schedule: reconcilers started together
    // compute the same window, and so the same lock.
    const to = Math.floor((startedAt - settleMs) / everyMs) * everyMs;
    for (const [id, at] of awaiting) if (at < startedAt - lookbackMs) awaiting.delete(id);
    const { report, resetAt } = await reconcilePass(settings, awaiting, { from: to - lookbackMs, to });
    const delay = delayAfter(report, resetAt, startedAt);
    report.nextRunAt = started ? clock.now() + delay : null;
    logReport(log, report, delay);
    onReport?.(report);
    return report;
  }

  function runOnce(): Promise<ReconcileReport> {
    // Passes never overlap: a call during one gets its report.
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  }

  async function tick(): Promise<void> {
    timer = undefined;
    let next: number;
    try {
      const report = await runOnce();
      next = report.nextRunAt === null ? everyMs : Math.max(0, report.nextRunAt - clock.now());
    } catch (error) {
      // A bug (not a WebhookError): said, and the schedule goes on after a backoff.
      failures++;
      next = Math.min(maxMs, initialMs * 2 ** (failures - 1));
      emit(log, 'error', 'reconcile: the pass failed', { service: client.service, err: error as Error });
    }
    if (started) timer = timers.set(tick, next);
  }

  return {
    runOnce,
    start(): void {
      if (started) return;
      started = true;
      timer = timers.set(tick, 0);
    },
    async stop(): Promise<void> {
      started = false;
      if (timer !== undefined) timers.clear(timer);
      timer = undefined;
      await running?.catch(() => {});
    },
  };
}
