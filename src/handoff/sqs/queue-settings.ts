/**
 * What a worker reads from its queue before taking a message: the visibility timeout (the lease a
 * received message has), FIFO and content-based deduplication, and the redrive policy (the
 * dead-letter queue and `maxReceiveCount`, the attempts). A queue the worker cannot run safely is
 * refused with `options_invalid`.
 */
import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { optionsInvalid } from '../worker-checks.js';

/** The settings of a work queue a worker runs with. */
export interface QueueSettings {
  readonly fifo: boolean;
  readonly visibilityTimeoutSeconds: number;
  /** `maxReceiveCount` of the redrive policy: receives before SQS moves a message to the dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly deadLetterQueueUrl: string;
}

/** The queue URL of an SQS queue ARN (`arn:aws:sqs:<region>:<account>:<name>`). */
async function queueUrlOfArn(client: Pick<SQSClient, 'send'>, arn: string): Promise<string> {
  const [, , , , account, name] = arn.split(':');
  if (!account || !name) throw new Error(`not a queue ARN: ${arn}`);
  const { QueueUrl } = await client.send(
    new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }),
  );
  if (!QueueUrl) throw new Error(`no URL for ${arn}`);
  return QueueUrl;
}

/** Reads and checks the work queue's settings; `options_invalid` for a queue it cannot run safely. */
export async function readQueueSettings(
  factory: string,
  client: Pick<SQSClient, 'send'>,
  queueUrl: string,
): Promise<QueueSettings> {
  const { Attributes: attributes = {} } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }),
  );
  const fifo = attributes.FifoQueue === 'true';
  if (fifo && attributes.ContentBasedDeduplication === 'true')
    throw optionsInvalid(
      factory,
      `the FIFO queue ${queueUrl} has ContentBasedDeduplication on: a message sent without a deduplication id (a re-drive from the console, another producer) is dropped when its body equals one of the last 5 minutes. Turn it off; the hand-off sets the deduplication id of every message.`,
    );
  let policy: { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown } = {};
  try {
    policy = JSON.parse(attributes.RedrivePolicy ?? '{}');
  } catch {
    // refused below
  }
  const maxReceiveCount = Number(policy.maxReceiveCount);
  if (typeof policy.deadLetterTargetArn !== 'string' || !Number.isSafeInteger(maxReceiveCount))
    throw optionsInvalid(
      factory,
      `the queue ${queueUrl} has no redrive policy: without a dead-letter queue a message that keeps failing is retried until the retention period deletes it. Set RedrivePolicy { deadLetterTargetArn, maxReceiveCount }.`,
    );
  return {
    fifo,
    visibilityTimeoutSeconds: Number(attributes.VisibilityTimeout ?? 30),
    maxReceiveCount,
    deadLetterQueueUrl: await queueUrlOfArn(client, policy.deadLetterTargetArn),
  };
}
