/**
 * One queue of `ensureSqsQueues`: created with the attributes wanted when missing, else read and
 * compared attribute by attribute (the redrive policy by its target and count), and changed only
 * with `update` (`SetQueueAttributes` with the differing ones).
 */
import type {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { type Difference, type EnsuredResource, planUpdate } from '../ensure.js';

/** The function named in the errors. */
export const FACTORY = 'ensureSqsQueues';

/**
 * The SDK's commands the setup sends, passed in rather than imported here: the library passes its
 * own imports, the `svc-webhooks` bin those of the SDK it loaded (it imports no peer up front).
 */
export interface SqsCommands {
  CreateQueueCommand: typeof CreateQueueCommand;
  GetQueueAttributesCommand: typeof GetQueueAttributesCommand;
  GetQueueUrlCommand: typeof GetQueueUrlCommand;
  SetQueueAttributesCommand: typeof SetQueueAttributesCommand;
}

/** An SQS error of a queue that is not there (the SDK's name, or the query protocol's code). */
const missing = (error: unknown) =>
  ['QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue'].includes(
    (error as { name?: string } | null)?.name ?? '',
  );

/** A queue to create or compare: its name, what it is, the attributes wanted. */
export interface Wanted {
  name: string;
  kind: string;
  attributes: Record<string, string>;
  /** The option that asks for an attribute's found value, by attribute. */
  keep: Record<string, string>;
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
    const option = wanted.keep[setting];
    const keep =
      there === '' || option === undefined
        ? undefined
        : setting === 'RedrivePolicy'
          ? keepPolicy(there, value)
          : `${option}: ${there}`;
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

/** The options that ask for the redrive policy found: its count, its dead-letter queue's name. */
function keepPolicy(found: string, wanted: string): string | undefined {
  const [there, want] = [policyOf(found), policyOf(wanted)];
  const count = Number(there.maxReceiveCount);
  const name = String(there.deadLetterTargetArn ?? '').split(':')[5];
  const options = [
    ...(Number.isSafeInteger(count) && count !== Number(want.maxReceiveCount)
      ? [`maxReceiveCount: ${count}`]
      : []),
    ...(name && there.deadLetterTargetArn !== want.deadLetterTargetArn
      ? [`deadLetterQueueName: '${name}'`]
      : []),
  ];
  return options.length > 0 ? options.join(', ') : undefined;
}

const samePolicy = (found: string, wanted: string) => {
  const [a, b] = [policyOf(found), policyOf(wanted)];
  return (
    a.deadLetterTargetArn === b.deadLetterTargetArn && Number(a.maxReceiveCount) === Number(b.maxReceiveCount)
  );
};

/** Creates the queue, or compares (and with `update` changes) the one there; its URL and ARN. */
export async function ensureQueue(
  sdk: SqsCommands,
  client: Pick<SQSClient, 'send'>,
  wanted: Wanted,
  update: boolean,
): Promise<EnsuredResource & { url: string; arn: string }> {
  const named = { QueueName: wanted.name };
  let url = await client.send(new sdk.GetQueueUrlCommand(named)).then(
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
      .send(new sdk.CreateQueueCommand({ ...named, Attributes: wanted.attributes }))
      .catch((error: unknown) => {
        if ((error as { name?: string }).name === 'QueueNameExists') return undefined;
        throw error;
      });
    created = answer?.QueueUrl !== undefined;
    url = answer?.QueueUrl ?? (await client.send(new sdk.GetQueueUrlCommand(named))).QueueUrl;
  }
  if (!url) throw new Error(`SQS gave no URL for the queue ${wanted.name}`);
  const { Attributes: found = {} } = await client.send(
    new sdk.GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
  );
  const arn = found.QueueArn ?? '';
  if (created) return { name: wanted.name, outcome: 'created', changed: [], url, arn };
  const changed = planUpdate(FACTORY, wanted, differences(found, wanted), update);
  if (changed.length === 0) return { name: wanted.name, outcome: 'unchanged', changed, url, arn };
  await client.send(
    new sdk.SetQueueAttributesCommand({
      QueueUrl: url,
      Attributes: Object.fromEntries(changed.map((setting) => [setting, wanted.attributes[setting]!])),
    }),
  );
  return { name: wanted.name, outcome: 'updated', changed, url, arn };
}
