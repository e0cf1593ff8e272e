/**
 * Dead letters on SQS are the messages of the work queue's dead-letter queue (its redrive policy):
 * moved there by the worker at once with the reason (`job_invalid`, `no_handler`, the last attempt's
 * failure) as message attributes, or by SQS after `maxReceiveCount` receives (a worker that kept
 * dying). Listed without consuming them, and re-driven by sending the unchanged body back.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { WebhookError } from '../../shared/errors.js';
import { jobFields, jobOfBody, letterReason } from '../run-and-settle.js';
import { optionsInvalid } from '../worker-checks.js';
import { sqsId } from './message-ids.js';

/** Message attribute holding why the worker dead-lettered a message (`<code>: <reason>`). */
export const REASON_ATTRIBUTE = 'svc-webhooks-reason';

/** Sends a received message's body to the dead-letter queue with the reason; the caller deletes it. */
export async function sendToDeadLetters(
  client: Pick<SQSClient, 'send'>,
  deadLetterQueueUrl: string,
  message: { messageId: string; body: string; groupId?: string | undefined },
  error: WebhookError,
): Promise<void> {
  const fifo = deadLetterQueueUrl.endsWith('.fifo');
  await client.send(
    new SendMessageCommand({
      QueueUrl: deadLetterQueueUrl,
      MessageBody: message.body,
      MessageAttributes: {
        [REASON_ATTRIBUTE]: {
          DataType: 'String',
          StringValue: letterReason(error),
        },
      },
      // The work queue's message id: a second send of the same letter (a crash before the delete) is dropped.
      ...(fifo
        ? {
            MessageGroupId: message.groupId ?? 'dead-letters',
            MessageDeduplicationId: sqsId(`dead:${message.messageId}`),
          }
        : {}),
    }),
  );
}

/**
 * A message of the dead-letter queue, as {@link listSqsDeadLetters} returns it.
 *
 * @example
 * ```ts
 * const letter: SqsDeadLetter = (await listSqsDeadLetters({ client, deadLetterQueueUrl }))[0]!;
 * console.log(letter.deliveryId, letter.event, letter.reason);
 * ```
 */
export interface SqsDeadLetter {
  /** The dead-letter queue's message id. */
  messageId: string;
  /** The job's delivery id, event and dedup key, as written (not verified: the worker verifies). */
  deliveryId?: string;
  event?: string;
  dedupKey?: string;
  /** `<code>: <reason>` when the worker dead-lettered it; undefined when SQS moved it after `maxReceiveCount`. */
  reason?: string;
  /** Receives of this message from the dead-letter queue, this listing included. */
  receiveCount: number;
}

/**
 * Options of {@link listSqsDeadLetters} and {@link redriveSqsDeadLetters}.
 *
 * @example
 * ```ts
 * const options: SqsDeadLetterOptions = { client, deadLetterQueueUrl, queueUrl, max: 100 };
 * ```
 */
export interface SqsDeadLetterOptions {
  client: Pick<SQSClient, 'send'>;
  /** The dead-letter queue's URL. */
  deadLetterQueueUrl: string;
  /** The work queue's URL (re-drive only). */
  queueUrl?: string;
  /** Most letters read. Default 100. */
  max?: number;
  /** Seconds the letters read stay hidden from other readers while listed or re-driven. Default 30. */
  holdSeconds?: number;
}

function check(
  factory: string,
  options: SqsDeadLetterOptions,
): Required<Omit<SqsDeadLetterOptions, 'queueUrl'>> {
  const { client, deadLetterQueueUrl, max = 100, holdSeconds = 30 } = options ?? {};
  if (typeof client?.send !== 'function') throw optionsInvalid(factory, 'client must be an SQSClient.');
  if (typeof deadLetterQueueUrl !== 'string')
    throw optionsInvalid(factory, 'deadLetterQueueUrl must be a queue URL.');
  if (!Number.isSafeInteger(max) || max < 1)
    throw optionsInvalid(factory, 'max must be a positive whole number.');
  if (!Number.isSafeInteger(holdSeconds) || holdSeconds < 1 || holdSeconds > 43_200)
    throw optionsInvalid(factory, 'holdSeconds must be a whole number from 1 to 43 200.');
  return { client, deadLetterQueueUrl, max, holdSeconds };
}

/** Receives up to `max` letters, each once, hidden for `holdSeconds`. */
async function receiveLetters(
  settings: Required<Omit<SqsDeadLetterOptions, 'queueUrl'>>,
): Promise<Message[]> {
  const { client, deadLetterQueueUrl, max, holdSeconds } = settings;
  const letters = new Map<string, Message>();
  while (letters.size < max) {
    const { Messages: batch = [] } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: deadLetterQueueUrl,
        MaxNumberOfMessages: Math.min(10, max - letters.size),
        VisibilityTimeout: holdSeconds,
        WaitTimeSeconds: 0,
        MessageAttributeNames: [REASON_ATTRIBUTE],
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
      }),
    );
    if (batch.length === 0) break;
    for (const message of batch) if (message.MessageId) letters.set(message.MessageId, message);
  }
  return [...letters.values()];
}

/**
 * Lists up to `max` dead letters with the job's delivery id, event and the reason. Reading an SQS
 * message hides it: the letters are made visible again right after (an SQS receive also counts).
 *
 * @example
 * ```ts
 * import { listSqsDeadLetters } from '@svc/webhooks/sqs';
 *
 * for (const d of await listSqsDeadLetters({ client, deadLetterQueueUrl })) console.log(d.deliveryId, d.event, d.reason);
 * ```
 */
export async function listSqsDeadLetters(options: SqsDeadLetterOptions): Promise<SqsDeadLetter[]> {
  const settings = check('listSqsDeadLetters', options);
  const letters = await receiveLetters(settings);
  for (let i = 0; i < letters.length; i += 10) {
    await settings.client.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: settings.deadLetterQueueUrl,
        Entries: letters.slice(i, i + 10).map((letter, n) => ({
          Id: String(n),
          ReceiptHandle: letter.ReceiptHandle!,
          VisibilityTimeout: 0,
        })),
      }),
    );
  }
  return letters.map((letter) => {
    const reason = letter.MessageAttributes?.[REASON_ATTRIBUTE]?.StringValue;
    return {
      messageId: letter.MessageId!,
      ...jobFields(jobOfBody(letter.Body ?? '')),
      ...(reason === undefined ? {} : { reason }),
      receiveCount: Number(letter.Attributes?.ApproximateReceiveCount ?? 1),
    };
  });
}

/**
 * Sends up to `max` dead letters back to the work queue, unchanged, and deletes each once sent. On a
 * FIFO queue the re-driven message's deduplication id is new (`redrive:` and the letter's message id),
 * so SQS's 5-minute deduplication of the original never drops it, while a letter sent twice (a crash
 * before its delete) is. A re-driven delivery whose handlers completed meanwhile runs nothing (its
 * claim is completed). Resolves with the number re-driven.
 *
 * @example
 * ```ts
 * import { redriveSqsDeadLetters } from '@svc/webhooks/sqs';
 *
 * const count = await redriveSqsDeadLetters({ client, deadLetterQueueUrl, queueUrl });
 * ```
 */
export async function redriveSqsDeadLetters(options: SqsDeadLetterOptions): Promise<number> {
  const settings = check('redriveSqsDeadLetters', options);
  const { queueUrl } = options;
  if (typeof queueUrl !== 'string')
    throw new WebhookError(
      'options_invalid',
      'redriveSqsDeadLetters: queueUrl (the work queue) is required.',
    );
  const fifo = queueUrl.endsWith('.fifo');
  let count = 0;
  for (const letter of await receiveLetters(settings)) {
    await settings.client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: letter.Body!,
        ...(fifo
          ? {
              MessageGroupId: letter.Attributes?.MessageGroupId ?? 'redrive',
              MessageDeduplicationId: sqsId(`redrive:${letter.MessageId}`),
            }
          : {}),
      }),
    );
    await settings.client.send(
      new DeleteMessageCommand({
        QueueUrl: settings.deadLetterQueueUrl,
        ReceiptHandle: letter.ReceiptHandle!,
      }),
    );
    count++;
  }
  return count;
}
