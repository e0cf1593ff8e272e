/**
 * `ensureSqsQueues` against fauxqs: standard and FIFO queues a worker starts on without a refusal or
 * a warning and runs a job from, a second run that changes nothing (the same attributes, no create
 * or `SetQueueAttributes`), and an existing queue with other settings refused, named attribute by
 * attribute, unchanged, unless `update: true`.
 */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createSqsHandoff, createSqsWorker, ensureSqsQueues } from '@svc/webhooks/sqs';
import type { FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOneJob } from '../support/one-job.js';
import { createQueues, sqsClient, startSqs, uniqueName } from './support.js';

let server: FauxqsServer;
let client: SQSClient;
beforeAll(async () => {
  server = await startSqs();
  client = sqsClient(server.address);
});
afterAll(async () => {
  client?.destroy();
  await server?.stop();
});

/** A client whose calls are recorded by command name. */
function recorded() {
  const calls: string[] = [];
  return {
    calls,
    client: {
      send: ((command: object, options?: unknown) => {
        calls.push(command.constructor.name.replace(/Command$/, ''));
        return client.send(command as never, options as never);
      }) as SQSClient['send'],
    },
  };
}

/** Every attribute but the counters and timestamps that move on their own. */
async function attributesOf(queueUrl: string): Promise<Record<string, string>> {
  const { Attributes = {} } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }),
  );
  return Object.fromEntries(Object.entries(Attributes).filter(([name]) => !/^Approximate/.test(name)));
}

describe('ensureSqsQueues', () => {
  for (const fifo of [false, true]) {
    it(`${fifo ? 'FIFO' : 'standard'}: creates both queues; the worker starts on them without a warning and runs a job; a second run changes nothing`, async () => {
      const queueName = `${uniqueName('setup')}${fifo ? '.fifo' : ''}`;
      const first = recorded();
      const setup = await ensureSqsQueues({ client: first.client, queueName });
      const deadName = fifo ? queueName.replace(/\.fifo$/, '-dead.fifo') : `${queueName}-dead`;
      expect(setup).toMatchObject({
        queue: { name: queueName, outcome: 'created', changed: [] },
        deadLetterQueue: { name: deadName, outcome: 'created', changed: [] },
      });
      const work = await attributesOf(setup.queueUrl);
      const dead = await attributesOf(setup.deadLetterQueueUrl);
      expect(work).toMatchObject({
        VisibilityTimeout: '60',
        MessageRetentionPeriod: '1209600',
        MaximumMessageSize: '1048576',
        ...(fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' } : {}),
      });
      expect(JSON.parse(work.RedrivePolicy!)).toEqual({
        deadLetterTargetArn: dead.QueueArn,
        maxReceiveCount: expect.toSatisfy((count: unknown) => Number(count) === 10),
      });
      expect(dead).toMatchObject({
        MessageRetentionPeriod: '1209600',
        ...(fifo ? { FifoQueue: 'true' } : {}),
      });

      // The real worker on what was created: no refusal, no warning, and a job runs to its end.
      expect(
        await runOneJob(createSqsHandoff({ client, queueUrl: setup.queueUrl }), (receiver) =>
          createSqsWorker({
            client,
            queueUrl: setup.queueUrl,
            receiver,
            waitTimeSeconds: 1,
            signals: [],
          }).start(),
        ),
      ).toEqual([]);

      const second = recorded();
      expect(await ensureSqsQueues({ client: second.client, queueName })).toEqual({
        ...setup,
        queue: { name: queueName, outcome: 'unchanged', changed: [] },
        deadLetterQueue: { name: deadName, outcome: 'unchanged', changed: [] },
      });
      expect(second.calls).toEqual([
        'GetQueueUrl',
        'GetQueueAttributes',
        'GetQueueUrl',
        'GetQueueAttributes',
      ]);
      expect(await attributesOf(setup.queueUrl)).toEqual(work);
      expect(await attributesOf(setup.deadLetterQueueUrl)).toEqual(dead);
    });
  }

  it('refuses queues with other settings, changing nothing; options that keep them match; update: true changes them', async () => {
    // As the test support creates them: a 30 s visibility timeout, 5 receives, 4 days of retention.
    const { queueUrl, queueName, deadLetterQueueUrl } = createQueues(server, { fifo: true });
    const deadLetterQueueName = deadLetterQueueUrl.split('/').pop()!;
    const before = await attributesOf(queueUrl);
    const refused = recorded();
    const error = await ensureSqsQueues({ client: refused.client, queueName, deadLetterQueueName }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'options_invalid', status: 500 });
    const message = (error as Error).message;
    expect(message).toContain(`the dead-letter queue ${deadLetterQueueName} exists with other settings`);
    expect(message).toContain('MessageRetentionPeriod is 345600, not 1209600');
    expect(message).toContain('Nothing was changed');
    expect(message).toContain('To keep what is there, pass retentionSeconds: 345600.');
    expect(message).toContain('update: true');
    expect(refused.calls).toEqual(['GetQueueUrl', 'GetQueueAttributes']);

    const keeping = { client, queueName, deadLetterQueueName, retentionSeconds: 345_600 };
    const workError = await ensureSqsQueues(keeping).catch((e: unknown) => e);
    const workMessage = (workError as Error).message;
    expect(workMessage).toContain(`the queue ${queueName} exists with other settings`);
    expect(workMessage).toContain('VisibilityTimeout is 30, not 60');
    expect(workMessage).toContain('pass visibilityTimeoutSeconds: 30, maxReceiveCount: 5.');
    expect(await attributesOf(queueUrl)).toEqual(before);

    const kept = recorded();
    expect(
      await ensureSqsQueues({
        ...keeping,
        client: kept.client,
        visibilityTimeoutSeconds: 30,
        maxReceiveCount: 5,
      }),
    ).toMatchObject({ queue: { outcome: 'unchanged' }, deadLetterQueue: { outcome: 'unchanged' } });
    expect(kept.calls).not.toContain('SetQueueAttributes');

    const updated = await ensureSqsQueues({ client, queueName, deadLetterQueueName, update: true });
    expect(updated).toMatchObject({
      queue: {
        outcome: 'updated',
        changed: ['MessageRetentionPeriod', 'VisibilityTimeout', 'RedrivePolicy'],
      },
      deadLetterQueue: { outcome: 'updated', changed: ['MessageRetentionPeriod'] },
    });
    expect(await attributesOf(queueUrl)).toMatchObject({
      VisibilityTimeout: '60',
      MessageRetentionPeriod: '1209600',
    });
    const again = recorded();
    expect(await ensureSqsQueues({ client: again.client, queueName, deadLetterQueueName })).toMatchObject({
      queue: { outcome: 'unchanged' },
      deadLetterQueue: { outcome: 'unchanged' },
    });
    expect(again.calls).not.toContain('SetQueueAttributes');
  });

  it('refuses a FIFO queue with content-based deduplication without an option to keep it; names another dead-letter queue', async () => {
    const dead = server.createQueue(`${uniqueName('other-dead')}.fifo`);
    const queueName = `${uniqueName('cbd')}.fifo`;
    server.createQueue(queueName, {
      attributes: {
        FifoQueue: 'true',
        ContentBasedDeduplication: 'true',
        VisibilityTimeout: '60',
        MessageRetentionPeriod: '1209600',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dead.queueArn, maxReceiveCount: 10 }),
      },
    });
    const error = await ensureSqsQueues({ client, queueName }).catch((e: unknown) => e);
    const message = (error as Error).message;
    expect(message).toContain('ContentBasedDeduplication is true, not false');
    expect(message).toContain(`deadLetterQueueName: '${dead.queueName}'`);
    expect(message).not.toContain('ContentBasedDeduplication:');
  });

  it('refuses options the worker or SQS would refuse, before any call', async () => {
    const { calls, client: counted } = recorded();
    for (const options of [
      { queueName: 'has space' },
      { queueName: 'a.fifo', deadLetterQueueName: 'a-dead' },
      { queueName: 'a', deadLetterQueueName: 'a' },
      { queueName: 'a', visibilityTimeoutSeconds: 0 },
      { queueName: 'a', maxReceiveCount: 0 },
      { queueName: 'a', retentionSeconds: 1_209_601 },
      { queueName: 'a', maxMessageBytes: 2_000_000 },
    ])
      await expect(ensureSqsQueues({ client: counted, ...options })).rejects.toMatchObject({
        code: 'options_invalid',
      });
    await expect(ensureSqsQueues({} as never)).rejects.toMatchObject({ code: 'options_invalid' });
    expect(calls).toEqual([]);
  });
});
