/**
 * The queues an SQS hand-off needs, in one call (`ensureSqsQueues`, ensure-sqs-queues.ts): the dead-letter queue, then the work queue with its
 * redrive policy to it, standard or FIFO (a name ending in `.fifo`, both queues then FIFO, without
 * content-based deduplication), with the settings docs/handoff.md "Amazon SQS" requires and the
 * worker's start check accepts. Created when missing, compared when present: safe at every deploy,
 * and an existing queue is never changed silently.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { EnsuredResource } from '../ensure.js';
import { optionsInvalid } from '../worker-checks.js';
import { ensureQueue, FACTORY, type SqsCommands } from './ensure-queue.js';

/**
 * Options of {@link ensureSqsQueues}.
 *
 * @example
 * ```ts
 * const options: SqsQueuesOptions = { client, queueName: 'crm-webhooks.fifo', visibilityTimeoutSeconds: 120 };
 * ```
 */
export interface SqsQueuesOptions {
  /** Your `SQSClient` (`@aws-sdk/client-sqs` v3), with the rights to create and configure queues. */
  client: Pick<SQSClient, 'send'>;
  /** The work queue's name; one ending in `.fifo` makes both queues FIFO. */
  queueName: string;
  /** The dead-letter queue's name. Default `<name>-dead` (`<name>-dead.fifo` for FIFO). */
  deadLetterQueueName?: string;
  /** `VisibilityTimeout` of the work queue, in seconds: above the handlers' budget (29 s by default). Default 60. */
  visibilityTimeoutSeconds?: number;
  /** `maxReceiveCount` of the redrive policy: the attempts (every receive counts, a delay too). Default 10. */
  maxReceiveCount?: number;
  /** `MessageRetentionPeriod` of both queues, in seconds. Default 1 209 600 (14 days, the most SQS keeps). */
  retentionSeconds?: number;
  /** `MaximumMessageSize` of both queues, in bytes (1 024 to 1 048 576). Default 1 048 576. */
  maxMessageBytes?: number;
  /** Change an existing queue's differing settings instead of refusing it. Default false. */
  update?: boolean;
}

function whole(name: string, value: unknown, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max)
    throw optionsInvalid(
      FACTORY,
      `${name} must be a whole number from ${min} to ${max} (got ${String(value)}).`,
    );
  return value as number;
}

const QUEUE_NAME = /^[A-Za-z0-9_-]{1,75}(\.fifo)?$/;

/** {@link ensureSqsQueues} with the SDK's commands given. */
export async function ensureQueues(
  sdk: SqsCommands,
  options: SqsQueuesOptions,
): Promise<{
  queueUrl: string;
  deadLetterQueueUrl: string;
  queue: EnsuredResource;
  deadLetterQueue: EnsuredResource;
}> {
  const {
    client,
    queueName,
    visibilityTimeoutSeconds = 60,
    maxReceiveCount = 10,
    retentionSeconds = 1_209_600,
    maxMessageBytes = 1_048_576,
    update = false,
  } = options ?? ({} as SqsQueuesOptions);
  if (typeof client?.send !== 'function')
    throw optionsInvalid(FACTORY, 'client must be an SQSClient of @aws-sdk/client-sqs.');
  if (typeof queueName !== 'string' || !QUEUE_NAME.test(queueName))
    throw optionsInvalid(
      FACTORY,
      'queueName must be a queue name: letters, digits, - and _, up to 80 characters with .fifo.',
    );
  const fifo = queueName.endsWith('.fifo');
  const deadLetterQueueName =
    options.deadLetterQueueName ?? `${queueName.replace(/\.fifo$/, '')}-dead${fifo ? '.fifo' : ''}`;
  if (
    typeof deadLetterQueueName !== 'string' ||
    !QUEUE_NAME.test(deadLetterQueueName) ||
    deadLetterQueueName === queueName
  )
    throw optionsInvalid(FACTORY, 'deadLetterQueueName must be the name of another queue.');
  if (deadLetterQueueName.endsWith('.fifo') !== fifo)
    throw optionsInvalid(
      FACTORY,
      `the dead-letter queue of a ${fifo ? 'FIFO' : 'standard'} queue must be ${fifo ? 'a FIFO queue (.fifo)' : 'a standard queue'}, as SQS requires.`,
    );
  whole('visibilityTimeoutSeconds', visibilityTimeoutSeconds, 1, 43_200);
  whole('maxReceiveCount', maxReceiveCount, 1, 1_000);
  whole('retentionSeconds', retentionSeconds, 60, 1_209_600);
  whole('maxMessageBytes', maxMessageBytes, 1_024, 1_048_576);

  const common = {
    MessageRetentionPeriod: String(retentionSeconds),
    MaximumMessageSize: String(maxMessageBytes),
    // The worker refuses content-based deduplication: it drops a message sent without an id (a console re-drive).
    ...(fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' } : {}),
  };
  const keep = { MessageRetentionPeriod: 'retentionSeconds', MaximumMessageSize: 'maxMessageBytes' };
  const dead = await ensureQueue(
    sdk,
    client,
    { name: deadLetterQueueName, kind: 'dead-letter queue', attributes: common, keep },
    update,
  );
  const redrive = JSON.stringify({ deadLetterTargetArn: dead.arn, maxReceiveCount: String(maxReceiveCount) });
  const work = await ensureQueue(
    sdk,
    client,
    {
      name: queueName,
      kind: 'queue',
      attributes: { ...common, VisibilityTimeout: String(visibilityTimeoutSeconds), RedrivePolicy: redrive },
      keep: {
        ...keep,
        VisibilityTimeout: 'visibilityTimeoutSeconds',
        RedrivePolicy: 'maxReceiveCount',
      },
    },
    update,
  );
  const { url: queueUrl, arn: _arn, ...queue } = work;
  const { url: deadLetterQueueUrl, arn: _deadArn, ...deadLetterQueue } = dead;
  return { queueUrl, deadLetterQueueUrl, queue, deadLetterQueue };
}
