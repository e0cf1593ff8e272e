/**
 * The DynamoDB store on dynalite (a DynamoDB-compatible server in its own process, on LevelDB) through
 * the real `DynamoDBClient`: the full store contract, the documented table definition, and the faults
 * a DynamoDB endpoint has: frozen (SIGSTOP: requests wait unanswered), crashed and restarted (SIGKILL,
 * then the same port and data), unreachable.
 */
import { readFileSync } from 'node:fs';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { createCrmReceiver, type DedupStore } from '@svc/webhooks';
import { createDynamoDBStore } from '@svc/webhooks/dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../package/dist.js';
import { answered, CRM_SECRET, crmDelivery } from '../receivers/support.js';
import { createManualClock } from '../support/clock.js';
import {
  createDedupTable,
  type DynaliteServer,
  startDynalite,
  waitActive,
} from '../support/dynalite-server.js';
import { freePort } from '../support/servers.js';
import type { StoreKind } from '../support/stores.js';
import { storeContract } from './contract.js';

let dynalite: DynaliteServer;
beforeAll(async () => {
  dynalite = await startDynalite();
});
afterAll(() => dynalite?.close());

/**
 * The store bound of calls made while dynalite is healthy: only a hang reaches it. Under load one
 * dynalite process answers 200 concurrent claims (and their reads) through the SDK's socket pool for
 * seconds, past the store's default 3 s, which is not what those checks are about.
 */
const HEALTHY_MS = 60_000;

let tables = 0;
async function newTable(): Promise<string> {
  const table = `dedup_${++tables}`;
  await createDedupTable(dynalite.client(), table);
  return table;
}

describe('dynamodb', () => {
  const kind: StoreKind = {
    name: 'dynamodb',
    // Items expire by DynamoDB's TTL: no prune().
    without: ['prune'],
    async create({ clock, timeoutMs } = {}) {
      return createDynamoDBStore({
        client: dynalite.client(),
        table: await newTable(),
        clock,
        callTimeoutMs: timeoutMs ?? HEALTHY_MS,
      });
    },
    async createUnreachable() {
      const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
      const client = new DynamoDBClient({
        endpoint: `http://127.0.0.1:${await freePort()}`,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test-secret' },
      });
      return createDynamoDBStore({ client });
    },
  };
  storeContract(kind);
});

/** The `aws dynamodb …` commands of docs/dedup-dynamodb.md, as the CLI's shorthand reads them. */
function documentedCommands(): { createTable: Record<string, string>; ttl: Record<string, string> } {
  const docs = readFileSync(`${root}docs/dedup-dynamodb.md`, 'utf8');
  const block = /```sh\n(aws dynamodb create-table[\s\S]*?)```/.exec(docs)?.[1];
  if (!block) throw new Error('docs/dedup-dynamodb.md has no `aws dynamodb create-table` block');
  const commands = block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter(Boolean);
  const options = (command: string | undefined) =>
    Object.fromEntries([...(command ?? '').matchAll(/--([a-z-]+) (\S+)/g)].map((m) => [m[1]!, m[2]!]));
  return {
    createTable: options(commands.find((c) => c.startsWith('aws dynamodb create-table'))),
    ttl: options(commands.find((c) => c.startsWith('aws dynamodb update-time-to-live'))),
  };
}

/** `AttributeName=key,KeyType=HASH` → `{ AttributeName: 'key', KeyType: 'HASH' }`. */
const shorthand = (text: string | undefined) =>
  Object.fromEntries((text ?? '').split(',').map((pair) => pair.split('=') as [string, string]));

describe('dynamodb specifics', () => {
  it('runs on the table docs/dedup-dynamodb.md defines, writing the TTL attribute it enables', async () => {
    const { createTable, ttl } = documentedCommands();
    const { CreateTableCommand } = await import('@aws-sdk/client-dynamodb');
    const client = dynalite.client();
    const table = `documented_${Date.now()}`;
    await client.send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: [shorthand(createTable['attribute-definitions']) as never],
        KeySchema: [shorthand(createTable['key-schema']) as never],
        BillingMode: createTable['billing-mode'] as 'PAY_PER_REQUEST',
      }),
    );
    await waitActive(client, table);
    expect(createTable['table-name']).toBe('webhook_dedup');
    expect(ttl['table-name']).toBe('webhook_dedup');
    const ttlSpecification = shorthand(ttl['time-to-live-specification']);
    expect(ttlSpecification.Enabled).toBe('true');

    const clock = createManualClock();
    const store = createDynamoDBStore({ client, table, clock });
    const claim = await store.claim('mail:delivery:d_1', { leaseMs: 30_000 });
    if (claim.status !== 'claimed') throw new Error('not claimed');
    expect(await store.complete('mail:delivery:d_1', claim.token, { ttlMs: 86_400_000 })).toBe(true);
    const { Item } = await client.send(
      new GetItemCommand({ TableName: table, Key: { key: { S: 'mail:delivery:d_1' } } }),
    );
    // DynamoDB deletes the item once the documented TTL attribute (epoch seconds) has passed.
    expect(Item?.[ttlSpecification.AttributeName!]).toEqual({
      N: String((clock.now() + 86_400_000) / 1_000),
    });
    expect(Item?.completed).toEqual({ BOOL: true });
  });

  it('the documented SDK calls name the same key and TTL attribute', () => {
    const docs = readFileSync(`${root}docs/dedup-dynamodb.md`, 'utf8');
    const block = /```ts\n(import \{[^}]*CreateTableCommand[\s\S]*?)```/.exec(docs)?.[1] ?? '';
    expect(block).toContain("AttributeDefinitions: [{ AttributeName: 'key', AttributeType: 'S' }]");
    expect(block).toContain("KeySchema: [{ AttributeName: 'key', KeyType: 'HASH' }]");
    expect(block).toContain("TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true }");
  });

  it('rejects a bad table name and a client that is not one', () => {
    for (const table of ['ab', 'has space', 'x'.repeat(256), 'semi;colon']) {
      expect(() => createDynamoDBStore({ client: dynalite.client(), table })).toThrow(/3 to 255/);
    }
    expect(() => createDynamoDBStore({ client: {} as never })).toThrow(/DynamoDBClient/);
  });

  it('reports a missing table as store_unavailable', async () => {
    const store = createDynamoDBStore({ client: dynalite.client(), table: 'does_not_exist' });
    await expect(store.claim('k', { leaseMs: 1_000 })).rejects.toMatchObject({ code: 'store_unavailable' });
  });

  it("uses this host's clock without an injected one", async () => {
    const store = createDynamoDBStore({ client: dynalite.client(), table: await newTable() });
    const before = Date.now();
    const result = await store.claim('k', { leaseMs: 60_000 });
    if (result.status !== 'claimed') throw new Error('not claimed');
    expect(result.leaseEndsAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(result.leaseEndsAt).toBeLessThanOrEqual(Date.now() + 60_000);
  });
});

/** Receiver options whose bounds only a hang reaches: for deliveries while the store is up. */
const HEALTHY = { storeTimeoutMs: HEALTHY_MS, timeoutMs: HEALTHY_MS, leaseMs: 2 * HEALTHY_MS };

/** CRM receivers on `dedup` that count the runs of each delivery's handler, across all of them. */
function counting(dedup: DedupStore) {
  const runs = new Map<string, number>();
  const receiverWith = (options: Partial<Parameters<typeof createCrmReceiver>[0]>) => {
    const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup, ...options });
    receiver.on('deal.won', (event) => {
      runs.set(event.deliveryId, (runs.get(event.deliveryId) ?? 0) + 1);
    });
    return receiver;
  };
  const send = async (receiver: ReturnType<typeof receiverWith>, delivery: ReturnType<typeof crmDelivery>) =>
    answered(await receiver.receive({ body: delivery.body, headers: delivery.headers, method: 'POST' }))
      .status;
  return { receiverWith, runs, send };
}

describe('dynamodb faults', () => {
  it('a frozen endpoint: store_unavailable within the store timeout; the late claim is harmless', async () => {
    // Only the call made while frozen carries the short bound under test; the others wait as long
    // as a loaded machine's dynalite needs.
    const store = createDynamoDBStore({
      client: dynalite.client(),
      table: await newTable(),
      callTimeoutMs: HEALTHY_MS,
    });
    expect((await store.claim('warm', { leaseMs: 30_000 })).status).toBe('claimed');
    dynalite.pause();
    try {
      const error = await store
        .claim('k', { leaseMs: 30_000, token: 'stalled', callTimeoutMs: 300 })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'WebhookError', code: 'store_unavailable', status: 503 });
      expect((error as Error & { cause: Error }).cause.message).toContain('within 300 ms');
    } finally {
      dynalite.resume();
    }
    // Whether or not the frozen server still applied the claim, before or after this, its abandon
    // makes it hold nothing (true: the marker was written, over a free key or the claim's own lease).
    expect(await store.abandon('k', 'stalled', { leaseMs: 30_000 })).toBe(true);
    expect((await store.claim('k', { leaseMs: 30_000 })).status).toBe('claimed');
  });

  it(
    'CRM deliveries while DynamoDB is frozen: 503, then each retry handled once',
    async () => {
      const dedup = createDynamoDBStore({ client: dynalite.client(), table: await newTable() });
      const { receiverWith, runs, send } = counting(dedup);
      // The bound under test, met while frozen; before and after, the deliveries reach a receiver on
      // the same store (another instance, say) whose bounds only a hang would reach.
      const frozen = receiverWith({ storeTimeoutMs: 300 });
      const healthy = receiverWith(HEALTHY);
      expect(await send(healthy, crmDelivery('deal.won'))).toBe(200); // warm: connections open
      const deliveries = Array.from({ length: 5 }, () => crmDelivery('deal.won'));
      dynalite.pause();
      try {
        expect(await Promise.all(deliveries.map((d) => send(frozen, d)))).toEqual(deliveries.map(() => 503));
      } finally {
        dynalite.resume();
      }
      // What waited in the frozen server (claims, abandons) runs in any order across the SDK's sockets:
      // a retry may find a late claim's lease (409) until its abandon ran. Polled on the outcome; only
      // a lease that is never dropped runs into the poll's bound.
      await expect
        .poll(async () => Promise.all(deliveries.map((d) => send(healthy, d))), {
          timeout: HEALTHY_MS,
          interval: 200,
        })
        .toEqual(deliveries.map(() => 200));
      expect(await Promise.all(deliveries.map((d) => send(healthy, d)))).toEqual(deliveries.map(() => 200));
      expect(deliveries.map((d) => runs.get(d.deliveryId))).toEqual(deliveries.map(() => 1));
    },
    2 * HEALTHY_MS,
  );

  it(
    'DynamoDB killed mid-run and restarted: 503 while down, completions kept, retries handled once',
    async () => {
      const dedup = createDynamoDBStore({ client: dynalite.client(), table: await newTable() });
      const { receiverWith, runs, send } = counting(dedup);
      // While down the SDK's connections are refused (503 after its retries, or at the 1 s bound);
      // up, a receiver whose bounds only a hang would reach.
      const down = receiverWith({ storeTimeoutMs: 1_000 });
      const healthy = receiverWith(HEALTHY);
      const before = crmDelivery('deal.won');
      expect(await send(healthy, before)).toBe(200);
      await dynalite.kill();
      const during = crmDelivery('deal.won');
      expect(await send(down, during)).toBe(503);
      expect(await send(down, before)).toBe(503); // even a duplicate: the store cannot say so
      await dynalite.start();
      // The SDK's sockets to the killed process may still fail a first call after the restart.
      await expect.poll(() => send(healthy, during), { timeout: HEALTHY_MS, interval: 200 }).toBe(200);
      expect(await send(healthy, during)).toBe(200);
      expect(await send(healthy, before)).toBe(200);
      expect(runs.get(before.deliveryId)).toBe(1);
      expect(runs.get(during.deliveryId)).toBe(1);
    },
    2 * HEALTHY_MS,
  );
});
