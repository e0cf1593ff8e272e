/** `ensureSqsQueues`: the queues of the SQS hand-off (setup.ts), with the SDK's commands of this package's import. */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import type { EnsuredResource } from '../ensure.js';
import { ensureQueues, type SqsQueuesOptions } from './setup.js';

const SDK = { CreateQueueCommand, GetQueueAttributesCommand, GetQueueUrlCommand, SetQueueAttributesCommand };

/**
 * Creates the work queue and its dead-letter queue when missing, with the settings the worker accepts
 * at start: a redrive policy to the dead-letter queue (`maxReceiveCount` 10), `VisibilityTimeout` 60 s,
 * 14 days of retention and 1 MiB messages on both; FIFO queues (a name ending in `.fifo`) without
 * content-based deduplication. Idempotent: a queue with those settings is left as it is (no
 * `SetQueueAttributes`), so run it at every deploy. A queue with other settings is refused with
 * `options_invalid` naming each attribute, its value and the fix, and nothing is changed, unless
 * `update: true`. Resolves with both URLs for `createSqsHandoff`, the worker and the dead-letter
 * functions. `svc-webhooks setup sqs` runs it from the shell.
 *
 * @example
 * ```ts
 * import { SQSClient } from '@aws-sdk/client-sqs';
 * import { ensureSqsQueues } from '@svc/webhooks/sqs';
 *
 * const { queueUrl, deadLetterQueueUrl } = await ensureSqsQueues({
 *   client: new SQSClient({}),
 *   queueName: 'crm-webhooks.fifo',
 * });
 * ```
 */
export function ensureSqsQueues(options: SqsQueuesOptions): Promise<{
  queueUrl: string;
  deadLetterQueueUrl: string;
  queue: EnsuredResource;
  deadLetterQueue: EnsuredResource;
}> {
  return ensureQueues(SDK, options);
}
