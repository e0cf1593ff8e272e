/**
 * Every shipped dedup store, each backed by a real server or file, for tests that must hold on all of them
 * (the store contract, and receiver tests through each store).
 *
 * ```ts
 * forEachStore((kind) => {
 *   it('handles once', async () => {
 *     const store = await kind.create();            // fresh, isolated store (own prefix / table)
 *     ...
 *   });
 * });
 * // Redis only: kind.redis is the running server (stop()/start() to simulate an outage).
 * ```
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { type Clock, createMemoryStore, type DedupStore } from '@svc/webhooks';
import { createPostgresStore } from '@svc/webhooks/postgres';
import { createRedisStore } from '@svc/webhooks/redis';
import { createSqliteStore } from '@svc/webhooks/sqlite';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe } from 'vitest';
import {
  freePort,
  type PostgresServer,
  postgresAvailable,
  type RedisServer,
  redisAvailable,
  startPostgres,
  startRedis,
} from './servers.js';
import { openRawSqlite } from './sqlite.js';

/**
 * Names of the store setups under test. `d1` and `dynamodb` run the contract in their own files
 * (test/dedup/d1-store.test.ts, dynamodb-store.test.ts), not through {@link forEachStore}.
 */
export type StoreName =
  | 'memory'
  | 'redis-ioredis'
  | 'redis-node-redis'
  | 'postgres-pg'
  | 'postgres-pglite'
  | 'sqlite'
  | 'd1'
  | 'dynamodb';

/** Options of {@link StoreKind.create}. */
export interface CreateStoreOptions {
  /** Injected clock; default the store's own time source (wall clock / server time). */
  clock?: Clock;
  /** Per-call timeout of the Redis/Postgres stores (ms). */
  timeoutMs?: number;
}

/** One store setup; `create` and `redis` work between the suite's beforeAll and afterAll. */
export interface StoreKind {
  name: StoreName;
  /** A new store isolated from every other one created here (own key prefix or table). */
  create(options?: CreateStoreOptions): Promise<DedupStore>;
  /** A store of this kind whose backend is unreachable (undefined for memory). */
  createUnreachable?(): Promise<DedupStore>;
  /** Makes the backend of `store` (one made by `create`) stop answering until the returned function runs. */
  stall?(store: DedupStore): Promise<() => Promise<void>>;
  /** Optional DedupStore methods this kind does not have (Redis expires records itself: no prune). */
  readonly without?: readonly ('abandon' | 'extend' | 'prune')[];
  /** The running Redis server (Redis kinds only): stop()/start() it to simulate an outage. */
  readonly redis?: RedisServer;
  /** The Redis client / pg pool behind the stores, for assertions that read the backend. */
  readonly client?: unknown;
}

let sequence = 0;
const unique = () => `t${process.pid}_${++sequence}_${Math.random().toString(36).slice(2, 8)}`;

/** A stall: the server process frozen (SIGSTOP), its connections open, until the returned function. */
function freeze(server: { pause(): void; resume(): void }): () => Promise<void> {
  server.pause();
  return async () => server.resume();
}

interface Lifecycle extends StoreKind {
  available(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function memoryKind(): Lifecycle {
  return {
    name: 'memory',
    available: () => true,
    start: async () => {},
    stop: async () => {},
    create: async ({ clock } = {}) => createMemoryStore(clock ? { clock } : {}),
  };
}

function ioredisKind(): Lifecycle {
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  return {
    name: 'redis-ioredis',
    available: redisAvailable,
    without: ['prune'],
    stall: async () => freeze(server!),
    get redis() {
      return server;
    },
    get client() {
      return client;
    },
    async start() {
      server = await startRedis();
      // Fail fast while Redis is down (503 at once), reconnect by itself when it is back.
      client = new Redis(server.port, '127.0.0.1', {
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        retryStrategy: () => 50,
      });
      client.on('error', () => {});
      await new Promise((resolve) => client?.once('ready', resolve));
    },
    async stop() {
      client?.disconnect();
      await server?.close();
    },
    create: async ({ clock, timeoutMs } = {}) =>
      createRedisStore({ client: client!, prefix: `${unique()}:`, clock, callTimeoutMs: timeoutMs }),
    async createUnreachable() {
      const broken = new Redis(await freePort(), '127.0.0.1', {
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        lazyConnect: true,
        retryStrategy: () => null,
      });
      broken.on('error', () => {});
      return createRedisStore({ client: broken });
    },
  };
}

function nodeRedisKind(): Lifecycle {
  let server: RedisServer | undefined;
  let client: ReturnType<typeof createClient> | undefined;
  return {
    name: 'redis-node-redis',
    available: redisAvailable,
    without: ['prune'],
    stall: async () => freeze(server!),
    get redis() {
      return server;
    },
    get client() {
      return client;
    },
    async start() {
      server = await startRedis();
      client = createClient({
        url: server.url,
        disableOfflineQueue: true,
        socket: { reconnectStrategy: () => 50 },
      });
      client.on('error', () => {});
      await client.connect();
    },
    async stop() {
      client?.destroy();
      await server?.close();
    },
    create: async ({ clock, timeoutMs } = {}) =>
      createRedisStore({ client: client!, prefix: `${unique()}:`, clock, callTimeoutMs: timeoutMs }),
    async createUnreachable() {
      // Never connected: node-redis rejects every command ("The client is closed").
      const broken = createClient({ url: `redis://127.0.0.1:${await freePort()}` });
      return createRedisStore({ client: broken });
    },
  };
}

function pgKind(): Lifecycle {
  let server: PostgresServer | undefined;
  let pool: pg.Pool | undefined;
  return {
    name: 'postgres-pg',
    available: postgresAvailable,
    stall: async () => freeze(server!),
    get client() {
      return pool;
    },
    async start() {
      server = await startPostgres();
      pool = new pg.Pool({ connectionString: server.connectionString, max: 20 });
      pool.on('error', () => {});
    },
    async stop() {
      await pool?.end();
      await server?.close();
    },
    async create({ clock, timeoutMs } = {}) {
      const store = createPostgresStore({ client: pool!, table: unique(), clock, callTimeoutMs: timeoutMs });
      await store.migrate();
      return store;
    },
    async createUnreachable() {
      const broken = new pg.Pool({ host: '127.0.0.1', port: await freePort(), user: 'postgres' });
      broken.on('error', () => {});
      return createPostgresStore({ client: broken });
    },
  };
}

function pgliteKind(): Lifecycle {
  let db: PGlite | undefined;
  return {
    name: 'postgres-pglite',
    available: () => true,
    get client() {
      return db;
    },
    async start() {
      db = await PGlite.create();
    },
    async stop() {
      await db?.close();
    },
    async create({ clock, timeoutMs } = {}) {
      const store = createPostgresStore({ client: db!, table: unique(), clock, callTimeoutMs: timeoutMs });
      await store.migrate();
      return store;
    },
    async createUnreachable() {
      const closed = await PGlite.create();
      await closed.close();
      return createPostgresStore({ client: closed });
    },
  };
}

function sqliteKind(): Lifecycle {
  let dir: string | undefined;
  const files = new WeakMap<DedupStore, string>();
  const file = () => join(dir!, `${unique()}.sqlite`);
  return {
    name: 'sqlite',
    available: () => true,
    async start() {
      dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-'));
    },
    async stop() {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
    // A file of its own per store, opened with the runtime's SQLite (node:sqlite or better-sqlite3).
    async create({ clock, timeoutMs } = {}) {
      const path = file();
      const store = createSqliteStore({ path, clock, callTimeoutMs: timeoutMs });
      files.set(store, path);
      return store;
    },
    // Another connection holds the file's write lock until it rolls back.
    async stall(store) {
      const other = openRawSqlite(files.get(store)!);
      other.exec('BEGIN IMMEDIATE');
      return async () => {
        other.exec('ROLLBACK');
        other.close();
      };
    },
    // The disk went read-only: the file opens, every write fails.
    async createUnreachable() {
      const path = file();
      await createSqliteStore({ path }).close();
      return createSqliteStore({ database: openRawSqlite(path, { readOnly: true }) });
    },
  };
}

const factories: Record<Exclude<StoreName, 'd1' | 'dynamodb'>, () => Lifecycle> = {
  memory: memoryKind,
  'redis-ioredis': ioredisKind,
  'redis-node-redis': nodeRedisKind,
  'postgres-pg': pgKind,
  'postgres-pglite': pgliteKind,
  sqlite: sqliteKind,
};

/** Every store setup name. */
export const STORE_NAMES = Object.keys(factories) as (keyof typeof factories)[];

/**
 * Defines `describe(<store name>, …)` for each store in `only` (default all), starting its server in
 * beforeAll and stopping it in afterAll. Redis/Postgres suites run when the server is installed and
 * always in CI, where a missing server fails the run.
 */
export function forEachStore(
  body: (kind: StoreKind) => void,
  only: readonly (keyof typeof factories)[] = STORE_NAMES,
): void {
  for (const name of only) {
    const kind = factories[name]();
    describe.runIf(kind.available())(name, () => {
      beforeAll(() => kind.start());
      afterAll(() => kind.stop());
      body(kind);
    });
  }
}
