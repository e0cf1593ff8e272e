/**
 * The SQS long-poll worker: receives up to 10 messages per call (`WaitTimeSeconds` long poll), runs
 * each through `receiver.runJob`, keeps it hidden while it runs (the visibility timeout extended every
 * third of it: the engine's lease), and settles it through {@link jobAction}: deleted (in batches),
 * hidden for the backoff (a retry: the next receive is the next attempt), or moved to the dead-letter
 * queue with the reason. On a FIFO queue the messages of one group run one after another, and a
 * failure hands the rest of its group back, so the group's order holds across retries.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { checkHandlerBudget } from '../handler-budget.js';
import type { JobAction } from '../job-action.js';
import { reportMessage, runMessage } from '../run-message.js';
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

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

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
  const shutdown = new AbortController();
  const running = new Set<Promise<void>>();
  let queue: QueueSettings | undefined;
  let starting: Promise<SqsWorker> | undefined;
  let stopping: Promise<void> | undefined;
  let loop: Promise<void> | undefined;
  let slotFreed: (() => void) | undefined;
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

  async function settle(message: Message, action: JobAction, attempt: number): Promise<void> {
    const body = message.Body ?? '';
    try {
      if (action.type === 'done') {
        pendingDeletes.push({ Id: String(++deleteIds), ReceiptHandle: message.ReceiptHandle! });
        await flushDeletes();
      } else if (action.type === 'dead-letter') {
        await sendToDeadLetters(
          client,
          queue!.deadLetterQueueUrl,
          { messageId: message.MessageId!, body, groupId: message.Attributes?.MessageGroupId },
          action.error,
        );
        pendingDeletes.push({ Id: String(++deleteIds), ReceiptHandle: message.ReceiptHandle! });
        await flushDeletes();
      } else if (action.type === 'delay') {
        await hide(message, action.ms / 1_000);
      } else {
        await hide(message, settings.backoffSeconds * 2 ** Math.max(0, attempt - 1));
      }
    } catch (error) {
      // The message reappears when its visibility timeout ends: the next receive settles it.
      reportMessage(
        receiver,
        error,
        body,
        `SQS message ${message.MessageId} could not be settled: ${describe(error)}`,
      );
    }
  }

  /** Runs one message while keeping it hidden; resolves with whether it is done. */
  async function runOne(message: Message): Promise<boolean> {
    const attempt = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
    const leaseSeconds = queue!.visibilityTimeoutSeconds;
    const lease = setInterval(
      () => void hide(message, leaseSeconds).catch(() => undefined),
      (leaseSeconds * 1_000) / 3,
    );
    try {
      const action = await runMessage(
        { messageId: `SQS message ${message.MessageId}`, body: message.Body ?? '', attempt },
        {
          receiver,
          timeoutMs,
          maxAttempts: queue!.maxReceiveCount,
          busyDelayMs,
          signal: shutdown.signal,
          shuttingDown: () => stopping !== undefined,
        },
      );
      await settle(message, action, attempt);
      return action.type === 'done' || action.type === 'dead-letter';
    } finally {
      clearInterval(lease);
    }
  }

  /** FIFO: one group's messages in order; after one is not done, the rest go back unrun. */
  async function runGroup(messages: Message[]): Promise<void> {
    for (let i = 0; i < messages.length; i++) {
      if (stopping !== undefined || !(await runOne(messages[i]!))) {
        for (const rest of messages.slice(i + (stopping !== undefined ? 0 : 1)))
          await hide(rest, 0).catch(() => undefined);
        return;
      }
    }
  }

  /** Messages received and not yet settled: at most `concurrency`. */
  let busy = 0;
  const track = (messages: Message[]) => {
    busy += messages.length;
    const done: Promise<void> = runGroup(messages).finally(() => {
      busy -= messages.length;
      running.delete(done);
      slotFreed?.();
    });
    running.add(done);
  };

  async function pollLoop(): Promise<void> {
    let failures = 0;
    while (stopping === undefined) {
      while (busy >= concurrency && stopping === undefined)
        await new Promise<void>((resolve) => (slotFreed = resolve));
      if (stopping !== undefined) return;
      let batch: Message[];
      try {
        ({ Messages: batch = [] } = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: Math.min(10, concurrency - busy),
            WaitTimeSeconds: waitTimeSeconds,
            MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
          }),
          { abortSignal: poll.signal },
        ));
        failures = 0;
      } catch (error) {
        if (stopping !== undefined) return;
        failures++;
        receiver.reportJobError(error, { message: `SQS receive failed: ${describe(error)}` });
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(30_000, 500 * 2 ** Math.min(6, failures))),
        );
        continue;
      }
      const groups = new Map<string, Message[]>();
      for (const message of batch) {
        const group = queue!.fifo ? (message.Attributes?.MessageGroupId ?? '') : (message.MessageId ?? '');
        groups.set(group, [...(groups.get(group) ?? []), message]);
      }
      for (const messages of groups.values()) track(messages);
    }
  }

  const onSignal = () => {
    void worker.stop().finally(() => {
      for (const name of settings.signals) process.off(name, onSignal);
    });
  };

  const worker: SqsWorker = {
    start() {
      starting ??= (async () => {
        queue = await readQueueSettings(FACTORY, client, queueUrl);
        checkHandlerBudget(FACTORY, receiver, {
          timeoutMs,
          limitMs: queue.visibilityTimeoutSeconds * 1_000,
          limitName: "the queue's VisibilityTimeout",
        });
        for (const name of settings.signals) process.once(name, onSignal);
        loop = pollLoop();
        return worker;
      })();
      return starting;
    },
    stop() {
      stopping ??= (async () => {
        for (const name of settings.signals) process.off(name, onSignal);
        await starting?.catch(() => undefined);
        poll.abort(new Error('worker stopping'));
        slotFreed?.();
        await loop;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), settings.shutdownTimeoutMs);
        });
        if ((await Promise.race([Promise.all(running), late])) === 'late') {
          // The handlers see their signal abort; the runs end as `delay`: hidden briefly, not failed.
          shutdown.abort(new Error('worker shutting down'));
          await Promise.all(running);
        }
        clearTimeout(timer);
        await flushing;
      })();
      return stopping;
    },
  };
  return worker;
}
