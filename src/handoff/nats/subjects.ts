/**
 * Subjects of the NATS JetStream hand-off: `<prefix>.<service>.<event>` for jobs (`webhooks.crm.deal.won`)
 * and `<prefix>-dead.<service>.<event>` for dead letters, so one stream per prefix holds every service's
 * jobs and consumers filter by service.
 */

/** A subject token of `value`: characters NATS treats specially (space, `*`, `>`) become `_`. */
const token = (value: string): string =>
  value.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.|\.$/g, '_') || '_';

/** The subject a job of `service` and `event` is published on. */
export const jobSubject = (prefix: string, service: string, event: string): string =>
  `${prefix}.${token(service)}.${token(event)}`;

/** The subject its dead letter is published on. */
export const deadLetterSubject = (prefix: string, service: string, event: string): string =>
  `${prefix}-dead.${token(service)}.${token(event)}`;

/** What a dead-letter message holds: the job's bytes unchanged (as text) and why it is there. */
export interface DeadLetterEnvelope {
  /** `<code>: <reason>`. */
  reason: string;
  /** Deliveries of the job before it was dead-lettered. */
  attempts: number;
  /** The work stream's sequence of the job. */
  seq: number;
  /** The job message's data, as received. */
  job: string;
}
