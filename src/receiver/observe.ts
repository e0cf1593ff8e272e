/**
 * A receiver's `receive` and `runJob` with its `onOutcome` and `telemetry`: timed, traced (a request's
 * whole path inside the telemetry's span, so handlers' own spans nest under it) and reported once per
 * delivery. Without either option the functions are returned as they are: the receive path pays
 * nothing for what it does not use. An outcome names no HTTP status: statuses exist only at the
 * HTTP edge (http-answer.ts), and a worker answers none.
 */

import { newFacts } from '../core/lag.js';
import { durationClock, outcomeOf, reportOutcome } from '../core/outcome.js';
import type { Receive } from '../core/receive-path.js';
import type { ReceiveInput } from '../core/receiver-types.js';
import { type Telemetry, type TraceStart, telemetryEnabled, traced } from '../core/telemetry.js';
import type { Verdict } from '../core/verdict.js';
import type { RunJob } from '../handoff/job/run-job.js';
import type { HandoffRunner } from '../handoff/job/types.js';
import { deliveryInboxOf } from './inbox-receipt.js';
import type { ResolvedOptions } from './receiver-options.js';

/**
 * `receive`, reporting an outcome (and tracing) per request when the options ask for it. With
 * `telemetry` alone, a request while it is not enabled (no SDK registered) goes straight to `receive`.
 */
export function observeReceive(service: string, options: ResolvedOptions, receive: Receive): Receive {
  const { onOutcome, telemetry, clock, logger } = options;
  if (!onOutcome && !telemetry) return receive;
  const now = durationClock(clock);
  // A hand-off target that runs deliveries in the request (the database inbox's direct mode) is direct.
  const enqueues = options.handoff !== undefined && !deliveryInboxOf(options.handoff)?.runInRequest;
  const mode = enqueues ? 'enqueue' : 'direct';
  const start: TraceStart = Object.freeze({ service, operation: enqueues ? 'send' : 'process' });
  async function observedReceive(input: ReceiveInput, recording: Telemetry | undefined): Promise<Verdict> {
    const startedAt = now();
    const facts = newFacts();
    const verdict = recording
      ? await traced(recording, start, () => receive(input, facts), logger)
      : await receive(input, facts);
    const outcome = outcomeOf(verdict, mode, now() - startedAt, undefined, facts, clock.now());
    reportOutcome(onOutcome, recording, logger, outcome);
    return verdict;
  }
  if (!telemetry) return (input) => observedReceive(input, undefined);
  return (input) =>
    telemetryEnabled(telemetry, logger, service)
      ? observedReceive(input, telemetry)
      : onOutcome
        ? observedReceive(input, undefined)
        : receive(input);
}

/** `runJob`, reporting an outcome per job run when the options ask for it (the span is run-job.ts's). */
export function observeRunJob(
  service: string,
  options: ResolvedOptions,
  runJob: RunJob,
): HandoffRunner['runJob'] {
  const { onOutcome, telemetry, clock, logger } = options;
  if (!onOutcome && !telemetry) return runJob;
  const now = durationClock(clock);
  return async function observedRunJob(job, runOptions) {
    const recording = telemetry && telemetryEnabled(telemetry, logger, service) ? telemetry : undefined;
    // A re-drive's check runs no handler: no outcome (inbox/redrive.ts).
    if ((!onOutcome && !recording) || (runOptions as { check?: true } | undefined)?.check)
      return runJob(job, runOptions);
    const startedAt = now();
    const facts = newFacts();
    const verdict = await runJob(job, runOptions, facts);
    const outcome = outcomeOf(verdict, 'worker', now() - startedAt, runOptions?.attempt, facts, clock.now());
    reportOutcome(onOutcome, recording, logger, outcome);
    return verdict;
  };
}
