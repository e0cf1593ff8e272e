// Compiled with `declaration: true` by .ci/consumer/check-types.mjs: a user's module (a test helper,
// an app's wiring) that exports values whose types TypeScript infers from each factory of the entries
// needing no optional peer. Declaration emit must name every type those values reach (TS2883, TS2742,
// TS4023 otherwise). `{ ...value }` spreads make the emitter print each member's type too, as a user's
// `export const { emit } = emitter` does. Arguments come from the factories' own parameter types.
// ./fastify is not here: its declarations name the `fastify` peer (check-types.mjs leaves it out).
import {
  constructCrmEvent,
  constructMailEvent,
  createCrmReceiver,
  createMailReceiver,
  createMemoryStore,
  httpAnswer,
  jobError,
  WebhookError,
} from '@svc/webhooks';
import { createCloudflareQueueConsumer, createCloudflareQueueHandoff } from '@svc/webhooks/cloudflare-queues';
import { createD1Store } from '@svc/webhooks/d1';
import { createExpressMiddleware } from '@svc/webhooks/express';
import { createFetchHandler } from '@svc/webhooks/fetch';
import { createHonoMiddleware } from '@svc/webhooks/hono';
import { createKoaMiddleware } from '@svc/webhooks/koa';
import { createLambdaHandler } from '@svc/webhooks/lambda';
import { createCrmClient, createMailClient, recoverFailedDeliveries } from '@svc/webhooks/manage';
import { createNestHandler } from '@svc/webhooks/nest';
import { createNextPagesHandler, createNextRouteHandlers } from '@svc/webhooks/next';
import { createNodeListener } from '@svc/webhooks/node';
import { createPgBossHandoff, createPgBossWorker } from '@svc/webhooks/pg-boss';
import { createPostgresStore } from '@svc/webhooks/postgres';
import { createRedisStore } from '@svc/webhooks/redis';
import { crmAnyEnvelopeSchema, mailEventSchema } from '@svc/webhooks/schemas';
import { createSqliteStore } from '@svc/webhooks/sqlite';
import {
  createCrmApi,
  createCrmEmitter,
  createFixtures,
  createMailApi,
  createMailEmitter,
  createRealClock,
  createSignedRequest,
  createVirtualClock,
  storeContract,
} from '@svc/webhooks/testing';
import { signPayload, verifySignature } from '@svc/webhooks/verify';

declare function given<T>(): T;
const secret = 'whsec_0123456789abcdef0123456789abcdef';

// The root entry: receivers, their members, the store contract, the hand-off job.
export const mailReceiver = createMailReceiver({ secret });
export const crmReceiver = createCrmReceiver({ secret });
export const mailReceiverMembers = { ...mailReceiver };
export const crmReceiverMembers = { ...crmReceiver };
export const memoryStore = createMemoryStore();
export const memoryStoreMembers = { ...memoryStore };
export const mailEvent = constructMailEvent(...given<Parameters<typeof constructMailEvent>>());
export const crmEvent = constructCrmEvent(...given<Parameters<typeof constructCrmEvent>>());
export const answer = httpAnswer(given<Parameters<typeof httpAnswer>[0]>());
export const failure = jobError(given<Parameters<typeof jobError>[0]>());
export const error = new WebhookError('signature_mismatch', 'no');
export const errorMembers = { ...error };

// Adapters.
export const fetchHandler = createFetchHandler({ '/webhooks/mail': mailReceiver });
export const fetchHandlerWithEnv = createFetchHandler((env: { SECRET: string }) => ({
  '/webhooks/mail': createMailReceiver({ secret: env.SECRET }),
}));
export const nodeListener = createNodeListener({ '/webhooks/mail': mailReceiver });
export const expressMiddleware = createExpressMiddleware(mailReceiver);
export const nextRoute = createNextRouteHandlers(mailReceiver);
export const nextRouteMembers = { ...nextRoute };
export const nextPages = createNextPagesHandler(mailReceiver);
export const honoMiddleware = createHonoMiddleware(mailReceiver);
export const koaMiddleware = createKoaMiddleware({ '/webhooks/mail': mailReceiver });
export const nestHandler = createNestHandler(mailReceiver);
export const lambdaHandler = createLambdaHandler({ '/webhooks/mail': mailReceiver });

// Stores.
export const redisStore = createRedisStore(given<Parameters<typeof createRedisStore>[0]>());
export const redisStoreMembers = { ...redisStore };
export const postgresStore = createPostgresStore(given<Parameters<typeof createPostgresStore>[0]>());
export const postgresStoreMembers = { ...postgresStore };
export const sqliteStore = createSqliteStore(given<Parameters<typeof createSqliteStore>[0]>());
export const sqliteStoreMembers = { ...sqliteStore };
export const d1Store = createD1Store(given<Parameters<typeof createD1Store>[0]>());
export const d1StoreMembers = { ...d1Store };

// Hand-off engines that need no peer in their declarations.
export const pgBossHandoff = createPgBossHandoff(given<Parameters<typeof createPgBossHandoff>[0]>());
export const pgBossHandoffMembers = { ...pgBossHandoff };
export const pgBossWorker = createPgBossWorker(given<Parameters<typeof createPgBossWorker>[0]>());
export const pgBossWorkerMembers = { ...pgBossWorker };
export const queueHandoff = createCloudflareQueueHandoff(
  given<Parameters<typeof createCloudflareQueueHandoff>[0]>(),
);
export const queueHandoffMembers = { ...queueHandoff };
export const queueConsumer = createCloudflareQueueConsumer(
  given<Parameters<typeof createCloudflareQueueConsumer>[0]>(),
);

// Management clients.
export const mailClient = createMailClient(given<Parameters<typeof createMailClient>[0]>());
export const mailClientMembers = { ...mailClient };
export const crmClient = createCrmClient(given<Parameters<typeof createCrmClient>[0]>());
export const crmClientMembers = { ...crmClient };
export const recovery = recoverFailedDeliveries(given<Parameters<typeof recoverFailedDeliveries>[0]>());

// Testing: emitters, clocks, fixtures, in-memory APIs, the store contract.
export const virtualClock = createVirtualClock();
export const virtualClockMembers = { ...virtualClock };
export const realClock = createRealClock();
export const realClockMembers = { ...realClock };
export const mailEmitter = createMailEmitter({ clock: virtualClock });
export const mailEmitterMembers = { ...mailEmitter };
export const crmEmitter = createCrmEmitter({ clock: realClock });
export const crmEmitterMembers = { ...crmEmitter };
export const fixtures = createFixtures();
export const fixturesMembers = { ...fixtures };
export const mailApi = createMailApi(given<Parameters<typeof createMailApi>[0]>());
export const mailApiMembers = { ...mailApi };
export const crmApi = createCrmApi(given<Parameters<typeof createCrmApi>[0]>());
export const crmApiMembers = { ...crmApi };
export const signedRequest = createSignedRequest(given<Parameters<typeof createSignedRequest>[0]>());
export const contract = storeContract(given<Parameters<typeof storeContract>[0]>());

// Schemas and the verifier.
export const mailEnvelope = mailEventSchema;
export const crmEnvelope = crmAnyEnvelopeSchema;
export const signature = signPayload(...given<Parameters<typeof signPayload>>());
export const verified = verifySignature(...given<Parameters<typeof verifySignature>>());
