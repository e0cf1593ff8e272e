/**
 * The receiver side of the SQS hand-off: one `SendMessage` per delivery, the authenticated job as the
 * message body. On a FIFO queue the job's dedup key is the message's deduplication id (SQS drops a
 * second message with it for 5 minutes) and its ordering key the message group.
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { EnqueueResult, HandoffJob, HandoffTarget } from '../job/types.js';
import { optionsInvalid } from '../worker-checks.js';
import { orderingKey, sqsId } from './message-ids.js';

const FACTORY = 'createSqsHandoff';

/** SQS's message size limit of a queue created with the defaults before 2025, in bytes (256 KiB). */
const DEFAULT_MAX_MESSAGE_BYTES = 262_144;

/** Bytes of a message kept for the job's fields other than the body (its headers are bounded far below). */
const JOB_FIELDS_BYTES = 16_384;

const encoder = new TextEncoder();

/**
 * Options of {@link createSqsHandoff}.
 *
 * @example
 * ```ts
 * import { SQSClient } from '@aws-sdk/client-sqs';
 *
 * const options: SqsHandoffOptions = {
 *   client: new SQSClient({}),
 *   queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/crm-webhooks.fifo',
 * };
 * ```
 */
export interface SqsHandoffOptions {
  /** Your `SQSClient` (`@aws-sdk/client-sqs` v3). */
  client: Pick<SQSClient, 'send'>;
  /** The work queue's URL. A URL ending in `.fifo` is a FIFO queue. */
  queueUrl: string;
  /**
   * FIFO only: the message group of a job, the entity whose events must run in order. Default
   * {@link orderingKey}: the deal, enrollment, campaign or contact of a CRM event, the email
   * message of an email event, else the delivery (docs/handoff-sqs.md "Ordering (FIFO)").
   */
  groupId?: (job: HandoffJob) => string;
  /**
   * The queue's `MaximumMessageSize`, in bytes. Default 262 144 (256 KiB). The largest delivery body
   * accepted is (this − 16 KiB) × 3/4, as the job carries it in base64: 180 KiB at the default.
   */
  maxMessageBytes?: number;
  /**
   * How long a delivery waits for SQS to accept the message, in ms, counted from its receipt (its
   * body read), the SDK's own retries inside it; then 503 with `Retry-After`. Default 2 000.
   */
  enqueueTimeoutMs?: number;
}

/**
 * A receiver's `handoff` target on SQS, as the receiver sees it.
 *
 * @example
 * ```ts
 * const handoff: SqsHandoff = createSqsHandoff({ client, queueUrl });
 * console.log(handoff.fifo, handoff.maxBodyBytes);
 * ```
 */
export interface SqsHandoff extends HandoffTarget {
  readonly enqueueTimeoutMs: number;
  readonly maxBodyBytes: number;
  /** Whether the queue is a FIFO queue (its URL ends in `.fifo`). */
  readonly fifo: boolean;
}

/**
 * Hand-off mode on Amazon SQS: a verified delivery becomes a message on your queue (the job, as
 * JSON), acknowledged once SQS accepted it; {@link createSqsWorker} or {@link createSqsLambdaHandler}
 * runs the handlers. On a FIFO queue a copy of a delivery sent within SQS's 5-minute deduplication
 * interval stores nothing (answered `queued` like a new one: SQS does not say); on a standard queue
 * it is a second message, which the worker's claim settles as a `duplicate`.
 *
 * @example
 * ```ts
 * import { SQSClient } from '@aws-sdk/client-sqs';
 * import { createCrmReceiver } from '@svc/webhooks';
 * import { createSqsHandoff } from '@svc/webhooks/sqs';
 *
 * const handoff = createSqsHandoff({ client: new SQSClient({}), queueUrl: process.env.QUEUE_URL! });
 * const receiver = createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET!, handoff });
 * ```
 */
export function createSqsHandoff(options: SqsHandoffOptions): SqsHandoff {
  const {
    client,
    queueUrl,
    groupId = orderingKey,
    maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
    enqueueTimeoutMs = 2_000,
  } = options ?? {};
  if (typeof client?.send !== 'function')
    throw optionsInvalid(FACTORY, 'client must be an SQSClient of @aws-sdk/client-sqs.');
  if (typeof queueUrl !== 'string' || !/^https?:\/\//.test(queueUrl))
    throw optionsInvalid(FACTORY, 'queueUrl must be the queue URL (https://sqs.<region>.amazonaws.com/…).');
  if (typeof groupId !== 'function') throw optionsInvalid(FACTORY, 'groupId must be a function of the job.');
  if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 65_536 || maxMessageBytes > 1_048_576)
    throw optionsInvalid(FACTORY, 'maxMessageBytes must be a whole number from 65 536 to 1 048 576.');
  const fifo = queueUrl.endsWith('.fifo');
  return {
    enqueueTimeoutMs,
    maxBodyBytes: Math.floor(((maxMessageBytes - JOB_FIELDS_BYTES) * 3) / 4),
    fifo,
    async enqueue(job: HandoffJob, { signal }): Promise<EnqueueResult> {
      const body = JSON.stringify(job);
      const bytes = encoder.encode(body).length;
      if (bytes > maxMessageBytes) {
        // Only headers far beyond any real delivery's get here: the body is bounded above.
        throw new Error(`The hand-off job is ${bytes} bytes; this SQS queue holds ${maxMessageBytes}.`);
      }
      const command = new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        ...(fifo ? { MessageDeduplicationId: sqsId(job.dedupKey), MessageGroupId: sqsId(groupId(job)) } : {}),
      });
      await client.send(command, { abortSignal: signal });
      return 'enqueued';
    },
  };
}
