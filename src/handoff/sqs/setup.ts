/**
 * The queues an SQS hand-off needs, in one call: the dead-letter queue, then the work queue with its
 * redrive policy to it, standard or FIFO (a name ending in `.fifo`, both queues then FIFO, without
 * content-based deduplication), with the settings docs/handoff.md "Amazon SQS" requires and the
 * worker's start check accepts. Created when missing, compared when present: safe at every deploy,
 * and an existing queue is never changed silently.
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type Difference, type EnsuredResource, planUpdate } from '../ensure.js';
import { optionsInvalid } from '../worker-checks.js';

const FACTORY = 'ensureSqsQueues';

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

/** An SQS error of a queue that is not there (the SDK's name, or the query protocol's code). */
const missing = (error: unknown) =>
  ['QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue'].includes(
    (error as { name?: string } | null)?.name ?? '',
  );

interface Wanted {
  name: string;
  kind: string;
  attributes: Record<string, string>;
  /** The option that asks for an attribute's found value, by attribute. */
  keep: Record<string, (found: string) => string>;
}

/** What SQS means by an attribute it does not list (a FIFO queue created without the attribute). */
const UNLISTED: Record<string, string> = { ContentBasedDeduplication: 'false' };

/** What differs between the attributes found and `wanted`'s. */
function differences(found: Record<string, string>, wanted: Wanted): Difference[] {
  const list: Difference[] = [];
  for (const [setting, value] of Object.entries(wanted.attributes)) {
    const there = found[setting] ?? UNLISTED[setting] ?? '';
    const same =
      setting === 'RedrivePolicy'
        ? samePolicy(there, value)
        : there === value || Number(there) === Number(value);
    if (same) continue;
    const keep = there === '' ? undefined : wanted.keep[setting]?.(there);
    list.push({
      setting,
      found: there || 'not set',
      wanted: value,
      ...(keep ? { keep } : {}),
      mutable: true,
    });
  }
  return list;
}

function policyOf(text: string): { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown } {
  try {
    return JSON.parse(text || '{}');
  } catch {
    return {};
  }
}

const samePolicy = (found: string, wanted: string) => {
  const [a, b] = [policyOf(found), policyOf(wanted)];
  return (
    a.deadLetterTargetArn === b.deadLetterTargetArn && Number(a.maxReceiveCount) === Number(b.maxReceiveCount)
  );
};

/** Creates the queue, or compares (and with `update` changes) the one there; its URL and ARN. */
async function ensureQueue(
  client: Pick<SQSClient, 'send'>,
  wanted: Wanted,
  update: boolean,
): Promise<EnsuredResource & { url: string; arn: string }> {
  const named = { QueueName: wanted.name };
  let url = await client.send(new GetQueueUrlCommand(named)).then(
    (found) => found.QueueUrl,
    (error: unknown) => {
      if (missing(error)) return undefined;
      throw error;
    },
  );
  let created = false;
  if (url === undefined) {
    // SQS answers a create of a queue there with the same attributes with its URL, and one with other
    // attributes (another deploy's, meanwhile) with QueueNameExists: that queue is then compared.
    const answer = await client
      .send(new CreateQueueCommand({ ...named, Attributes: wanted.attributes }))
      .catch((error: unknown) => {
        if ((error as { name?: string }).name === 'QueueNameExists') return undefined;
        throw error;
      });
    created = answer?.QueueUrl !== undefined;
    url = answer?.QueueUrl ?? (await client.send(new GetQueueUrlCommand(named))).QueueUrl;
  }
  if (!url) throw new Error(`SQS gave no URL for the queue ${wanted.name}`);
  const { Attributes: found = {} } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
  );
  const arn = found.QueueArn ?? '';
  if (created) return { name: wanted.name, outcome: 'created', changed: [], url, arn };
  const changed = planUpdate(FACTORY, wanted, differences(found, wanted), update);
  if (changed.length === 0) return { name: wanted.name, outcome: 'unchanged', changed, url, arn };
  await client.send(
    new SetQueueAttributesCommand({
      QueueUrl: url,
      Attributes: Object.fromEntries(changed.map((setting) => [setting, wanted.attributes[setting]!])),
    }),
  );
  return { name: wanted.name, outcome: 'updated', changed, url, arn };
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
export async function ensureSqsQueues(options: SqsQueuesOptions): Promise<{
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
  const keep = {
    MessageRetentionPeriod: (found: string) => `retentionSeconds: ${found}`,
    MaximumMessageSize: (found: string) => `maxMessageBytes: ${found}`,
  };
  const dead = await ensureQueue(
    client,
    { name: deadLetterQueueName, kind: 'dead-letter queue', attributes: common, keep },
    update,
  );
  const redrive = JSON.stringify({ deadLetterTargetArn: dead.arn, maxReceiveCount: String(maxReceiveCount) });
  const work = await ensureQueue(
    client,
    {
      name: queueName,
      kind: 'queue',
      attributes: { ...common, VisibilityTimeout: String(visibilityTimeoutSeconds), RedrivePolicy: redrive },
      keep: {
        ...keep,
        VisibilityTimeout: (found) => `visibilityTimeoutSeconds: ${found}`,
        RedrivePolicy: (found) => {
          const policy = policyOf(found);
          const count = Number(policy.maxReceiveCount);
          const name = String(policy.deadLetterTargetArn ?? '').split(':')[5];
          return [
            ...(Number.isSafeInteger(count) && count !== maxReceiveCount
              ? [`maxReceiveCount: ${count}`]
              : []),
            ...(name && policy.deadLetterTargetArn !== dead.arn ? [`deadLetterQueueName: '${name}'`] : []),
          ].join(', ');
        },
      },
    },
    update,
  );
  const { url: queueUrl, arn: _arn, ...queue } = work;
  const { url: deadLetterQueueUrl, arn: _deadArn, ...deadLetterQueue } = dead;
  return { queueUrl, deadLetterQueueUrl, queue, deadLetterQueue };
}
