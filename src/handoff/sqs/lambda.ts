/**
 * The Lambda side of the SQS hand-off: a handler for an SQS event source mapping with
 * `ReportBatchItemFailures` on. Each record runs through `receiver.runJob` and {@link jobAction};
 * only the records that are not settled come back in `batchItemFailures`, so Lambda deletes the
 * others and SQS makes the failed ones visible again (the next receive is the next attempt). On a
 * FIFO queue the records run in order and the first one not settled returns with every record after
 * it, as Lambda requires to keep each group's order.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { HandoffRunner } from '../job/types.js';
import { type EngineParts, jobOfBody, type LoopJob, runAndSettle } from '../run-and-settle.js';
import { checkRunner, optionsInvalid, positiveInteger } from '../worker-checks.js';
import { sendToDeadLetters } from './dead-letters.js';

const FACTORY = 'createSqsLambdaHandler';

/**
 * One record of a Lambda SQS event (`SQSRecord` of `@types/aws-lambda`, the fields read here).
 *
 * @example
 * ```ts
 * const record: SqsRecordLike = { messageId: 'm1', body: '{}', eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:q', attributes: { ApproximateReceiveCount: '1' } };
 * ```
 */
export interface SqsRecordLike {
  messageId: string;
  body: string;
  eventSourceARN: string;
  attributes: { ApproximateReceiveCount: string; MessageGroupId?: string | undefined };
}

/**
 * Options of {@link createSqsLambdaHandler}.
 *
 * @example
 * ```ts
 * const options: SqsLambdaHandlerOptions = { receiver, maxReceiveCount: 10 };
 * ```
 */
export interface SqsLambdaHandlerOptions {
  /** The receiver whose `.on(...)` handlers run the jobs, with a shared dedup store. */
  receiver: HandoffRunner;
  /** The redrive policy's `maxReceiveCount`: a failure on that attempt is dead-lettered with its reason. */
  maxReceiveCount?: number;
  /**
   * With `deadLetterQueueUrl`: a record no retry can fix (`job_invalid`, `no_handler`) or out of
   * attempts is sent there at once with its reason and not returned. Without them it is returned as
   * failed until the redrive policy moves it after `maxReceiveCount` receives.
   */
  client?: Pick<SQSClient, 'send'>;
  deadLetterQueueUrl?: string;
  /** Handler time budget per record, in ms. Default the receiver's `leaseMs` − 1 s; keep the function's timeout above it. */
  timeoutMs?: number;
}

/**
 * A Lambda handler for SQS event source mappings of hand-off queues: `{ batchItemFailures }` lists the
 * records to run again. Enable `ReportBatchItemFailures` on the mapping (else Lambda retries the whole
 * batch when any record fails; the claims still make the settled ones duplicates).
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createDynamoDBStore } from '@svc/webhooks/dynamodb';
 * import { createSqsLambdaHandler } from '@svc/webhooks/sqs';
 *
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, dedup: createDynamoDBStore({ client, table: 'webhook_dedup' }) })
 *   .on('bounced', async (event) => suppress(event.payload.to));
 * export const handler = createSqsLambdaHandler({ receiver, maxReceiveCount: 10 });
 * ```
 */
export function createSqsLambdaHandler(
  options: SqsLambdaHandlerOptions,
): (event: {
  Records: readonly SqsRecordLike[];
}) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }> {
  const { receiver, maxReceiveCount, client, deadLetterQueueUrl, timeoutMs } =
    options ?? ({} as SqsLambdaHandlerOptions);
  checkRunner(FACTORY, receiver);
  if (maxReceiveCount !== undefined) positiveInteger(FACTORY, 'maxReceiveCount', maxReceiveCount);
  if (timeoutMs !== undefined) positiveInteger(FACTORY, 'timeoutMs', timeoutMs);
  if (
    (client === undefined) !== (deadLetterQueueUrl === undefined) ||
    (client && typeof client.send !== 'function')
  )
    throw optionsInvalid(FACTORY, 'give both client (an SQSClient) and deadLetterQueueUrl, or neither.');

  const parts: EngineParts<LoopJob & { record: SqsRecordLike }> = {
    receiver,
    timeoutMs,
    busyDelayMs: 5_000,
    async settle({ record }, action) {
      if (action.type === 'done') return 'done';
      if (action.type !== 'dead-letter' || !client || !deadLetterQueueUrl) return 'retried';
      await sendToDeadLetters(
        client,
        deadLetterQueueUrl,
        { messageId: record.messageId, body: record.body, groupId: record.attributes.MessageGroupId },
        action.error,
      );
      return 'dead-lettered';
    },
  };

  /** Whether the record is settled (Lambda may delete it); a failed dead-letter send is retried. */
  async function settle(record: SqsRecordLike): Promise<boolean> {
    const attempt = Number(record.attributes?.ApproximateReceiveCount ?? 1) || 1;
    const job = { record, label: `SQS message ${record.messageId}`, data: jobOfBody(record.body), attempt };
    const { settled } = await runAndSettle({ ...job, maxAttempts: maxReceiveCount }, parts);
    return settled === 'done' || settled === 'dead-lettered';
  }

  return async (event) => {
    const records = event?.Records ?? [];
    const failed = (list: readonly SqsRecordLike[]) =>
      list.map((record) => ({ itemIdentifier: record.messageId }));
    if (records[0]?.eventSourceARN.endsWith('.fifo')) {
      for (let i = 0; i < records.length; i++) {
        if (!(await settle(records[i]!))) return { batchItemFailures: failed(records.slice(i)) };
      }
      return { batchItemFailures: [] };
    }
    const settled = await Promise.all(records.map(settle));
    return { batchItemFailures: failed(records.filter((_, i) => !settled[i])) };
  };
}
