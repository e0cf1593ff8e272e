/**
 * The SQS long-poll worker on the one worker loop (worker-loop.ts): receives up to 10 messages per
 * call (`WaitTimeSeconds` long poll), keeps each hidden while it runs (the visibility timeout extended
 * every third of it: the engine's lease), and settles it: deleted (in batches), hidden for the backoff
 * (a retry: the next receive is the next attempt), or moved to the dead-letter queue with the reason.
 * On a FIFO queue the messages of one group run one after another, and a failure hands the rest of
 * its group back, so the group's order holds across retries.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import type { JobAction } from '../job-action.js';
import { describe, jobOfBody, type LoopJob, type Settled } from '../run-and-settle.js';
import { checkHandlerBudget } from '../worker-checks.js';
import { createWorkerLoop } from '../worker-loop.js';
import { sendToDeadLetters } from './dead-letters.js';
import { type QueueSettings, readQueueSettings } from './queue-settings.js';
import { FACTORY, resolveSqsWorkerOptions, type SqsWorkerOptions } from './worker-options.js';

/**
 * A running SQS hand-off worker.
 *
 * @example
 * ```ts
 * const worker = await createSqsWorker({ client, queueUrl, receiver }).start();
 * await worker.stop();
 * ```
 */
export interface SqsWorker {
  /** Reads and checks the queue's settings (`options_invalid` when unsafe), then starts polling. */
  start(): Promise<SqsWorker>;
  /** Stops polling, waits up to `shutdownTimeoutMs` for running messages, then aborts and hands them back. */
  stop(): Promise<void>;
}

interface SqsJob extends LoopJob {
  readonly message: Message;
}

/**
 * Runs hand-off jobs from an SQS queue through `receiver.runJob`. The queue must have a redrive policy
 * (its `maxReceiveCount` is the attempts, `ApproximateReceiveCount` the attempt) and, when FIFO, no
 * content-based deduplication; its visibility timeout must outlast the handler budget.
 *
 * @example
 * ```ts
 * import { SQSClient } from '@aws-sdk/client-sqs';
 * import { createCrmReceiver } from '@svc/webhooks';
 * import { createSqsWorker } from '@svc/webhooks/sqs';
 *
 * const receiver = createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET!, dedup })
 *   .on('deal.won', async (event, { signal }) => crm.recordWin(event.data, { signal }));
 * await createSqsWorker({ client: new SQSClient({}), queueUrl: process.env.QUEUE_URL!, receiver }).start();
 * ```
 */
export function createSqsWorker(options: SqsWorkerOptions): SqsWorker {
  const settings = resolveSqsWorkerOptions(options);
  const { client, queueUrl, receiver, concurrency, waitTimeSeconds, timeoutMs, busyDelayMs } = settings;
  const poll = new AbortController();
  let queue: QueueSettings | undefined;
  const pendingDeletes: { Id: string; ReceiptHandle: string }[] = [];
  let flushing: Promise<void> | undefined;
  let deleteIds = 0;

  const hide = (message: Message, seconds: number) =>
    client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: message.ReceiptHandle!,
        VisibilityTimeout: Math.min(43_200, Math.max(0, Math.ceil(seconds))),
      }),
    );

  /** Deletes in batches of up to 10: the completions of one turn share a call. */
  const flushDeletes = (): Promise<void> => {
    flushing ??= (async () => {
      await Promise.resolve();
      while (pendingDeletes.length > 0) {
        const entries = pendingDeletes.splice(0, 10);
        try {
          const { Failed = [] } = await client.send(
            new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }),
          );
          for (const failed of Failed)
            receiver.reportJobError(new Error(failed.Message ?? failed.Code), {
              message: `SQS message could not be deleted (${failed.Code}); it runs again and settles as a duplicate`,
            });
        } catch (error) {
          receiver.reportJobError(error, {
            message: `SQS messages could not be deleted: ${describe(error)}; they run again and settle as duplicates`,
          });
        }
      }
      flushing = undefined;
    })();
    return flushing;
  };

  const remove = (message: Message) => {
    pendingDeletes.push({ Id: String(++deleteIds), ReceiptHandle: message.ReceiptHandle! });
    return flushDeletes();
  };

  async function settle({ message, attempt }: SqsJob, action: JobAction): Promise<Settled> {
    if (action.type === 'done') {
      await remove(message);
      return 'done';
    }
    if (action.type === 'dead-letter') {
      await sendToDeadLetters(
        client,
        queue!.deadLetterQueueUrl,
        {
          messageId: message.MessageId!,
          body: message.Body ?? '',
          groupId: message.Attributes?.MessageGroupId,
        },
        action.error,
      );
      await remove(message);
      return 'dead-lettered';
    }
    await hide(
      message,
      action.type === 'delay' ? action.ms / 1_000 : settings.backoffSeconds * 2 ** Math.max(0, attempt - 1),
    );
    return 'retried';
  }

  const loop = createWorkerLoop<SqsJob>({
    receiver,
    timeoutMs,
    busyDelayMs,
    concurrency,
    shutdownTimeoutMs: settings.shutdownTimeoutMs,
    signals: settings.signals,
    settle,
    extend: {
      get everyMs() {
        return (queue!.visibilityTimeoutSeconds * 1_000) / 3;
      },
      call: ({ message }) => hide(message, queue!.visibilityTimeoutSeconds),
    },
    fetchName: 'SQS receive',
    async fetch(max) {
      const { Messages = [] } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(10, max),
          WaitTimeSeconds: waitTimeSeconds,
          MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
        }),
        { abortSignal: poll.signal },
      );
      return Messages.map((message) => ({
        message,
        label: `SQS message ${message.MessageId}`,
        data: jobOfBody(message.Body ?? ''),
        attempt: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
        maxAttempts: queue!.maxReceiveCount,
      }));
    },
    groupOf: ({ message }) =>
      queue!.fifo ? `group:${message.Attributes?.MessageGroupId ?? ''}` : `message:${message.MessageId}`,
    handBack: ({ message }) => hide(message, 0),
    async prepare() {
      queue = await readQueueSettings(FACTORY, client, queueUrl);
      const limitMs = queue.visibilityTimeoutSeconds * 1_000;
      checkHandlerBudget(FACTORY, receiver, {
        timeoutMs,
        limitMs,
        limitName: "the queue's VisibilityTimeout",
      });
    },
    stopClaiming: () => poll.abort(new Error('worker stopping')),
    afterStop: () => flushing,
  });

  const worker: SqsWorker = { start: () => loop.start().then(() => worker), stop: loop.stop };
  return worker;
}
