/**
 * The D1 store on a real D1 (workerd's, through miniflare's binding proxy): the full store contract,
 * its own options, and the faults a D1 has: no answer past the store timeout (a stall), a binding
 * whose runtime is gone. The same store inside a Worker, built: test/handoff/workerd.test.ts.
 */
import { createCrmReceiver } from '@svc/webhooks';
import { createD1Store } from '@svc/webhooks/d1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, CRM_SECRET, crmDelivery } from '../receivers/support.js';
import { createManualClock } from '../support/clock.js';
import { type D1Server, startD1 } from '../support/d1.js';
import type { StoreKind } from '../support/stores.js';
import { expectBadRowsReplaced } from './bad-rows.js';
import { storeContract } from './contract.js';

let server: D1Server;
beforeAll(async () => {
  server = await startD1();
});
afterAll(() => server?.close());

/** The store bound of calls made while the store is healthy: only a hang reaches it. */
const HEALTHY_MS = 60_000;

let tables = 0;
const table = () => `dedup_${++tables}`;

// miniflare's Node proxy answers prepare() and bind() synchronously, each a round trip to workerd
// that blocks Node: 200 concurrent claims (the contract claims one key 200 times, twice) hold the
// event loop for seconds, more the less CPU this process gets. Neither bound is what a check
// claims: the store's (60 s) and the test's (120 s) are there for a real hang only.
describe('d1', { timeout: 120_000 }, () => {
  const kind: StoreKind = {
    name: 'd1',
    async create({ clock, timeoutMs = 60_000 } = {}) {
      const store = createD1Store({
        database: server.database,
        table: table(),
        clock,
        callTimeoutMs: timeoutMs,
      });
      await store.migrate();
      return store;
    },
    createUnreachable: () => server.unreachable((database) => createD1Store({ database })),
  };
  storeContract(kind);
});

describe('d1 specifics', () => {
  it('creates its table on first use with createTable, idempotently', async () => {
    const name = table();
    const store = createD1Store({ database: server.database, table: name, createTable: true });
    expect((await store.claim('k', { leaseMs: 1_000 })).status).toBe('claimed');
    await store.migrate();
    const { results } = await server.database.prepare(`SELECT key, completed FROM ${name}`).all();
    expect(results).toEqual([{ key: 'k', completed: 0 }]);
  });

  it('reads a row it cannot read (an older table, a hand edit) as expired, with one warning', async () => {
    const name = table();
    // An older table: no NOT NULL; rows with a NULL, text in expires_at, a completed of 7.
    await server.database
      .prepare(
        `CREATE TABLE ${name} (key TEXT PRIMARY KEY, token TEXT, completed INTEGER, expires_at INTEGER)`,
      )
      .run();
    const future = Date.now() + 3_600_000;
    await server.database
      .prepare(
        `INSERT INTO ${name} VALUES ('crm:delivery:null-token', NULL, 0, ${future}),
          ('crm:delivery:text-time', 'old', 0, 'tomorrow'), ('crm:delivery:seven', 'old', 7, ${future}),
          ('crm:delivery:abandon', 'old', 0, NULL)`,
      )
      .run();
    const store = createD1Store({ database: server.database, table: name });
    await expectBadRowsReplaced(
      store,
      ['crm:delivery:null-token', 'crm:delivery:text-time', 'crm:delivery:seven'],
      'crm:delivery:abandon',
    );
  });

  it('rejects unsafe or reserved table names and a binding that is not one', () => {
    for (const name of ['x; DROP TABLE y', 'a.b', '"quoted"', '1abc', '', '_cf_KV', 'sqlite_master']) {
      expect(() => createD1Store({ database: server.database, table: name })).toThrow(/letters, digits/);
    }
    expect(() => createD1Store({ database: {} as never })).toThrow(/D1 binding/);
  });

  it("uses the database's clock without an injected one", async () => {
    const store = createD1Store({ database: server.database, table: table(), createTable: true });
    const before = Date.now();
    const result = await store.claim('k', { leaseMs: 60_000 });
    if (result.status !== 'claimed') throw new Error('not claimed');
    // workerd's SQLite reads the same machine clock: within the test's own span of it.
    expect(result.leaseEndsAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(result.leaseEndsAt).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(Number.isInteger(result.leaseEndsAt)).toBe(true);
    expect(await store.claim('k', { leaseMs: 60_000 })).toEqual({
      status: 'in_progress',
      leaseEndsAt: result.leaseEndsAt,
    });
    expect(await store.complete('k', result.token, { ttlMs: 60_000 })).toBe(true);
  });

  it('prepares each statement once and binds it per call (a binding proxy blocks on each prepare)', async () => {
    const prepared: string[] = [];
    const database = {
      prepare: (query: string) => {
        prepared.push(query);
        return server.database.prepare(query);
      },
      batch: (statements: Parameters<D1Server['database']['batch']>[0]) => server.database.batch(statements),
    };
    const store = createD1Store({ database, table: table(), createTable: true });
    const claims = await Promise.all(Array.from({ length: 20 }, () => store.claim('k', { leaseMs: 30_000 })));
    const winner = claims.find((claim) => claim.status === 'claimed');
    expect(claims.filter((claim) => claim.status === 'in_progress')).toHaveLength(19);
    if (winner?.status !== 'claimed') throw new Error('not claimed');
    expect(await store.extend('k', winner.token, { leaseMs: 30_000 })).toBe(true);
    expect(await store.complete('k', winner.token, { ttlMs: 60_000 })).toBe(true);
    expect(await store.abandon('other', 'tok', { leaseMs: 30_000 })).toBe(true);
    expect(await store.release('k', winner.token)).toBe(false);
    await store.prune();
    const statements = prepared.filter((query) => !/^CREATE/.test(query));
    expect(statements).toEqual([...new Set(statements)]);
  });

  it('prepares per call a D1-like binding whose bind() changes the statement itself', async () => {
    // A shim that keeps the bound values on the statement and reads them only when it runs.
    const database = {
      prepare(query: string) {
        let values: unknown[] = [];
        const real = () => server.database.prepare(query).bind(...values);
        const statement = {
          bind: (...given: unknown[]) => {
            values = given;
            return statement;
          },
          all: async () => {
            await Promise.resolve();
            return real().all();
          },
          run: async () => {
            await Promise.resolve();
            return real().run();
          },
          real,
        };
        return statement;
      },
      async batch(statements: { real(): ReturnType<D1Server['database']['prepare']> }[]) {
        await Promise.resolve();
        return server.database.batch(statements.map((statement) => statement.real()));
      },
    };
    const store = createD1Store({ database: database as never, table: table(), createTable: true });
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    const claims = await Promise.all(
      keys.map((key) => store.claim(key, { leaseMs: 30_000, token: `t-${key}` })),
    );
    expect(claims.map((claim) => claim.status === 'claimed' && claim.token)).toEqual(
      keys.map((key) => `t-${key}`),
    );
    for (const key of keys) expect(await store.complete(key, `t-${key}`, { ttlMs: 60_000 })).toBe(true);
  });

  it('reports a missing table as store_unavailable', async () => {
    const store = createD1Store({ database: server.database, table: 'does_not_exist' });
    await expect(store.claim('k', { leaseMs: 1_000 })).rejects.toMatchObject({ code: 'store_unavailable' });
  });

  it('keeps abandoned-token markers through prune until their lease would have ended', async () => {
    const clock = createManualClock();
    const store = createD1Store({ database: server.database, table: table(), clock, createTable: true });
    expect(await store.abandon('k', 'lost', { leaseMs: 10_000 })).toBe(true);
    clock.advance(9_999);
    expect(await store.prune()).toBe(0);
    clock.advance(1);
    expect(await store.prune()).toBe(1);
  });
});

describe('d1 faults', () => {
  it('a stalled database: store_unavailable within the store timeout, and the late claim is harmless', async () => {
    const d1 = server.stalling();
    // The store's own bound is for a real hang only: the calls before and after the stall wait on a
    // loaded machine's D1; only the call made during the stall carries the short bound under test.
    const store = createD1Store({ database: d1.database, table: table(), callTimeoutMs: HEALTHY_MS });
    await store.migrate();
    d1.hold();
    // The claim waits unanswered; the caller gives up at its bound. It still runs on release.
    const error = await store
      .claim('k', { leaseMs: 30_000, token: 'stalled', callTimeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'WebhookError', code: 'store_unavailable', status: 503 });
    expect((error as Error & { cause: Error }).cause.message).toContain('within 300 ms');
    await d1.release();
    // The late claim ran and took the key: the stalled attempt's abandon drops it again.
    expect((await store.claim('k', { leaseMs: 30_000 })).status).toBe('in_progress');
    expect(await store.abandon('k', 'stalled', { leaseMs: 30_000 })).toBe(true);
    expect((await store.claim('k', { leaseMs: 30_000 })).status).toBe('claimed');
  });

  it('fails with store_unavailable when the runtime behind the binding is gone', async () => {
    const store = await server.unreachable((database) => createD1Store({ database, table: table() }));
    await expect(store.claim('k', { leaseMs: 1_000 })).rejects.toMatchObject({ code: 'store_unavailable' });
  });

  it('CRM deliveries during a stall: 503 within storeTimeoutMs, then each retry handled once', async () => {
    const d1 = server.stalling();
    const dedup = createD1Store({ database: d1.database, table: table(), callTimeoutMs: HEALTHY_MS });
    await dedup.migrate();
    const runs = new Map<string, number>();
    const receiverWith = (options: Partial<Parameters<typeof createCrmReceiver>[0]>) => {
      const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup, ...options });
      receiver.on('deal.won', (event) => {
        runs.set(event.deliveryId, (runs.get(event.deliveryId) ?? 0) + 1);
      });
      return receiver;
    };
    // The bound under test, met during the stall; the sender's retries reach a receiver on the same
    // store (another instance, say) whose bounds only a hang would reach, so a loaded machine's slow
    // D1 cannot answer them 503.
    const stalled = receiverWith({ storeTimeoutMs: 300 });
    const healthy = receiverWith({
      storeTimeoutMs: HEALTHY_MS,
      timeoutMs: HEALTHY_MS,
      leaseMs: 2 * HEALTHY_MS,
    });
    const deliveries = Array.from({ length: 5 }, () => crmDelivery('deal.won'));
    const send = async (receiver: typeof stalled, delivery: (typeof deliveries)[number]) =>
      answered(await receiver.receive({ body: delivery.body, headers: delivery.headers, method: 'POST' }))
        .status;
    d1.hold();
    expect(await Promise.all(deliveries.map((d) => send(stalled, d)))).toEqual([503, 503, 503, 503, 503]);
    // The stall ends: the held claims run, then the abandons the receiver queued behind them, in the
    // order they were made; release() resolves once all of them settled, so every key is free.
    await d1.release();
    // The sender's retries: each delivery runs its handler once, then is a duplicate.
    expect(await Promise.all(deliveries.map((d) => send(healthy, d)))).toEqual(deliveries.map(() => 200));
    expect(await Promise.all(deliveries.map((d) => send(healthy, d)))).toEqual(deliveries.map(() => 200));
    expect(deliveries.map((d) => runs.get(d.deliveryId))).toEqual(deliveries.map(() => 1));
  });
});
