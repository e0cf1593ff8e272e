/**
 * One message of a queue engine that hands out text (SQS, NATS JetStream) through `receiver.runJob`
 * and {@link jobAction}: the part their workers and the SQS Lambda handler share. The body is parsed here (a body that is not JSON is passed on as text and
 * refused `job_invalid` by `runJob`); the action is reported once when `runJob` did not report it.
 */
import { isWebhookError } from '../shared/errors.js';
import type { HandoffRunner } from './job/types.js';
import { type JobAction, jobAction, jobActionOfError } from './job-action.js';

/** What a worker knows of a message. */
export interface MessageFacts {
  /** The engine's name and id of the message, for reports (`SQS message 1f3…`). */
  readonly messageId: string;
  readonly body: string;
  /** `ApproximateReceiveCount`: the attempt, from 1. */
  readonly attempt: number;
}

/** How {@link runMessage} runs a message. */
export interface RunMessageSettings {
  readonly receiver: HandoffRunner;
  readonly timeoutMs: number | undefined;
  readonly maxAttempts: number | undefined;
  readonly busyDelayMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Whether the worker is shutting down (read after the run). */
  readonly shuttingDown?: (() => boolean) | undefined;
}

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === 'string' ? error : 'non-error thrown';

/** The job of a message body: its JSON, or the text itself (refused by `runJob`). */
export function jobOfBody(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/** Reports `error` for the job in `body` through the receiver, never throwing. */
export function reportMessage(
  receiver: HandoffRunner,
  error: unknown,
  body: string,
  message: string,
  deadLetter = false,
): void {
  const job = jobOfBody(body);
  const fields = (typeof job === 'object' && job !== null ? job : {}) as {
    deliveryId?: unknown;
    dedupKey?: unknown;
  };
  try {
    receiver.reportJobError(error, {
      ...(typeof fields.deliveryId === 'string' ? { deliveryId: fields.deliveryId } : {}),
      ...(typeof fields.dedupKey === 'string' ? { dedupKey: fields.dedupKey } : {}),
      message,
      ...(deadLetter ? { deadLetter } : {}),
    });
  } catch {
    // a throwing onError hook must not leave the message unsettled
  }
}

/** Runs one message and returns what to do with it; never rejects. */
export async function runMessage(facts: MessageFacts, settings: RunMessageSettings): Promise<JobAction> {
  const { receiver, timeoutMs, maxAttempts, busyDelayMs, signal, shuttingDown } = settings;
  const { attempt } = facts;
  let action: JobAction;
  try {
    const verdict = await receiver.runJob(jobOfBody(facts.body), {
      attempt,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(signal ? { signal } : {}),
    });
    action = jobAction(verdict, { attempt, maxAttempts, busyDelayMs, shuttingDown: shuttingDown?.() });
  } catch (error) {
    action = jobActionOfError(error, { attempt, maxAttempts });
  }
  if (action.type !== 'done' && !action.reported) {
    const code = isWebhookError(action.error) ? action.error.code : 'internal_error';
    const text =
      action.type === 'dead-letter'
        ? `${facts.messageId} dead-lettered${action.exhausted ? ` after ${attempt} attempts` : ''} (${code}): ${describe(action.error)}`
        : `${facts.messageId} attempt ${attempt} not run (${code}); it is retried`;
    reportMessage(receiver, action.error, facts.body, text, action.type === 'dead-letter');
  } else if (action.type === 'dead-letter') {
    reportMessage(
      receiver,
      action.error,
      facts.body,
      `${facts.messageId} dead-lettered after ${attempt} attempts`,
      true,
    );
  }
  return action;
}
