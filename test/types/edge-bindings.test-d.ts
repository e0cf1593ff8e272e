/**
 * The Workers runtime's own types (`@cloudflare/workers-types`) fit the structural ones the D1 store
 * and the Queues entry take, so an app passes `env.DB`, `env.WEBHOOKS` and a `MessageBatch` as they
 * are, without a cast.
 */
import type { D1Database, MessageBatch, Queue } from '@cloudflare/workers-types/index.ts';
import {
  type CloudflareQueueConsumerOptions,
  createCloudflareQueueConsumer,
  createCloudflareQueueHandoff,
} from '@svc/webhooks/cloudflare-queues';
import { createD1Store, type D1StoreOptions } from '@svc/webhooks/d1';
import { expectTypeOf, test } from 'vitest';

declare const env: { DB: D1Database; WEBHOOKS: Queue; WEBHOOKS_DEAD: Queue };
declare const batch: MessageBatch;
declare const receiver: CloudflareQueueConsumerOptions['receiver'];

test('a D1Database is a D1 store database', () => {
  expectTypeOf(env.DB).toExtend<D1StoreOptions['database']>();
  createD1Store({ database: env.DB });
});

test('a Queue binding and a MessageBatch fit the hand-off and the consumer', () => {
  createCloudflareQueueHandoff({ queue: env.WEBHOOKS });
  const consume = createCloudflareQueueConsumer({ receiver, deadLetterQueue: env.WEBHOOKS_DEAD });
  expectTypeOf(consume(batch)).toEqualTypeOf<Promise<void>>();
  // @ts-expect-error a queue is a binding, not its name
  createCloudflareQueueHandoff({ queue: 'webhooks' });
});
