/**
 * @module
 * A local SQS for trying the example: fauxqs (an SQS emulator) on 127.0.0.1:4566 with the queues the
 * hand-off needs: `webhooks` and its dead-letter queue `webhooks-dead` (redrive after 10 receives).
 * On AWS, create the same two queues (docs/handoff.md "SQS") and skip this file.
 */
import { startFauxqs } from 'fauxqs';

const server = await startFauxqs({
  port: Number(process.env.SQS_PORT ?? 4566),
  host: 'localhost',
  logger: false,
});
const dead = server.createQueue('webhooks-dead');
const work = server.createQueue('webhooks', {
  attributes: {
    VisibilityTimeout: '60',
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dead.queueArn, maxReceiveCount: '10' }),
  },
});
console.log(`SQS ready at ${server.address}: ${work.queueUrl}`);
process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)));
process.once('SIGINT', () => void server.stop().then(() => process.exit(0)));
