/**
 * @module
 * A receiver (node:http) in hand-off mode on SQS and a long-poll worker, in one process for the
 * example: the receiver answers 200 once SQS holds the message; the worker runs the handler and
 * prints one JSON line per handled event. In production they are separate processes (or the worker
 * is a Lambda function: createSqsLambdaHandler).
 */
import { createServer } from 'node:http';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createMailReceiver } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createSqsHandoff, createSqsWorker } from '@svc/webhooks/sqs';

const secret = process.env.SVC_MAIL_WEBHOOK_SECRET;
const endpoint = process.env.SQS_ENDPOINT;
const queueUrl = process.env.SQS_QUEUE_URL;
if (!secret || !queueUrl) {
  console.error('set SVC_MAIL_WEBHOOK_SECRET and SQS_QUEUE_URL (and SQS_ENDPOINT for a local SQS)');
  process.exit(1);
}
const client = new SQSClient(
  endpoint
    ? {
        endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        useQueueUrlAsEndpoint: false,
      }
    : {},
);

// The receiving side: verify, validate, enqueue, answer.
const receiving = createMailReceiver({ secret, handoff: createSqsHandoff({ client, queueUrl }) });
const port = Number(process.env.PORT ?? 3011);
createServer(createNodeListener(receiving)).listen(port, '127.0.0.1', () =>
  console.log(`receiver listening on http://127.0.0.1:${port}/webhooks/mail`),
);

// The worker side: the same handlers, run from the queue. Its dedup store must be shared by every
// worker in production (Redis, PostgreSQL, DynamoDB); the memory store is enough for one process.
const working = createMailReceiver({ secret }).onAny((event, { attempt }) =>
  console.log(JSON.stringify({ service: 'mail', event: event.name, deliveryId: event.deliveryId, attempt })),
);
await createSqsWorker({ client, queueUrl, receiver: working }).start();
console.log('worker running');
