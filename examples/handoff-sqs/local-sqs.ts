/**
 * @module
 * A local SQS for trying the example: fauxqs (an SQS emulator) on 127.0.0.1:4566, with the queues the
 * hand-off needs created by `ensureSqsQueues`: `webhooks` and its dead-letter queue `webhooks-dead`
 * (redrive after 10 receives, a 60 s visibility timeout, 14 days of retention). On AWS, skip the
 * emulator: run the same call (or `svc-webhooks setup sqs --queue webhooks`) with your credentials.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { ensureSqsQueues } from '@svc/webhooks/sqs';
import { startFauxqs } from 'fauxqs';

const server = await startFauxqs({
  port: Number(process.env.SQS_PORT ?? 4566),
  host: 'localhost',
  logger: false,
});
const client = new SQSClient({
  endpoint: server.address,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  useQueueUrlAsEndpoint: false,
});
const { queueUrl } = await ensureSqsQueues({ client, queueName: 'webhooks' });
client.destroy();
console.log(`SQS ready at ${server.address}: ${queueUrl}`);
process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)));
process.once('SIGINT', () => void server.stop().then(() => process.exit(0)));
