/**
 * @module
 * A receiver (node:http) in hand-off mode on NATS JetStream and a worker (a durable pull consumer),
 * in one process for the example. `ensureNatsStreams` creates the two streams when missing (and
 * leaves them as they are when they have the settings it wants): `WEBHOOKS` (subjects `webhooks.>`, a
 * 5-minute duplicate window: the worker refuses one under 3 minutes) and `WEBHOOKS_DEAD` (subjects
 * `webhooks-dead.>`).
 */
import { createServer } from 'node:http';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createMailReceiver } from '@svc/webhooks';
import { createNatsHandoff, createNatsWorker, ensureNatsStreams } from '@svc/webhooks/nats';
import { createNodeListener } from '@svc/webhooks/node';

const secret = process.env.SVC_MAIL_WEBHOOK_SECRET;
if (!secret) {
  console.error('set SVC_MAIL_WEBHOOK_SECRET (e.g. $(openssl rand -hex 24))');
  process.exit(1);
}
const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
const js = jetstream(nc);
await ensureNatsStreams({ js });

const receiving = createMailReceiver({ secret, handoff: createNatsHandoff({ js }) });
const port = Number(process.env.PORT ?? 3012);
createServer(createNodeListener(receiving)).listen(port, '127.0.0.1', () =>
  console.log(`receiver listening on http://127.0.0.1:${port}/webhooks/mail`),
);

// The same handlers, run from the stream. In production its dedup store is shared by every worker.
const working = createMailReceiver({ secret }).onAny((event, { attempt }) =>
  console.log(JSON.stringify({ service: 'mail', event: event.name, deliveryId: event.deliveryId, attempt })),
);
await createNatsWorker({ js, receiver: working, onShutdown: () => nc.drain() }).start();
console.log('worker running');
