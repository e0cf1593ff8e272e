/**
 * The transaction adapters and recipes of docs/inbox-transactions.md "Transaction adapters" on real drivers: on
 * PostgreSQL, `drizzleTransactions` (node-postgres and postgres.js), `kyselyTransactions` (pg),
 * `postgresJsTransactions` and the Prisma 7 recipe (its engine-less client, generated here offline);
 * on a SQLite file, `drizzleSqliteTransactions` (better-sqlite3) and, where the runtime has it,
 * node:sqlite alone and under Drizzle. Handlers write through `context.tx`; each delivery's first run
 * fails after its write, which must roll back with it; each delivery ends with exactly one business
 * row and one handled row after two runs.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createPostgresInbox,
  drizzleTransactions,
  type InboxTransactions,
  kyselyTransactions,
  postgresJsTransactions,
} from '@svc/webhooks/postgres';
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';
import { exactlyOnce, type Target } from './fixtures/exactly-once.js';
import {
  generatePrismaClient,
  type PrismaLike,
  type PrismaTx,
  removePrismaClient,
} from './fixtures/prisma.js';
import { runSqliteCases } from './fixtures/sqlite-orm.js';
import { uniqueTable } from './support.js';

/** docs/inbox-transactions.md "Prisma": an interactive `$transaction`, the inbox's statement by `$queryRawUnsafe`. */
function prismaTransactions(prisma: PrismaLike): InboxTransactions<PrismaTx> {
  return {
    transaction: (work) =>
      prisma.$transaction((tx) => work(tx, async (text) => (await tx.$queryRawUnsafe(text)).length), {
        timeout: 30_000,
      }),
  };
}

describe.runIf(postgresAvailable())('inbox with ORM and driver transactions on PostgreSQL', () => {
  let postgresServer: PostgresServer;
  let pool: pg.Pool;
  let target: Target;
  const businessTable = async () => {
    const business = uniqueTable('orm_business');
    await pool.query(`CREATE TABLE ${business} (delivery_id TEXT NOT NULL)`);
    return business;
  };
  beforeAll(async () => {
    postgresServer = await startPostgres();
    pool = new pg.Pool({ connectionString: postgresServer.connectionString, max: 4 });
    pool.on('error', () => {});
    target = {
      inbox: (table) => createPostgresInbox({ client: pool, table }),
      count: async (business) =>
        (await pool.query(`SELECT delivery_id, count(*)::int AS n FROM ${business} GROUP BY delivery_id`))
          .rows,
    };
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await postgresServer?.close();
  });

  it('Drizzle (node-postgres): one business row per delivery, failed runs rolled back', async () => {
    const business = await businessTable();
    await exactlyOnce(target, business, drizzleTransactions(drizzle(pool)), (tx, id) =>
      tx.execute(drizzleSql`INSERT INTO ${drizzleSql.identifier(business)} (delivery_id) VALUES (${id})`),
    );
  });

  it('Drizzle (postgres.js): one business row per delivery, failed runs rolled back', async () => {
    const business = await businessTable();
    const sql = postgres(postgresServer.connectionString, { max: 4, onnotice: () => {} });
    try {
      await exactlyOnce(target, business, drizzleTransactions(drizzlePostgresJs(sql)), (tx, id) =>
        tx.execute(drizzleSql`INSERT INTO ${drizzleSql.identifier(business)} (delivery_id) VALUES (${id})`),
      );
    } finally {
      await sql.end();
    }
  });

  it('Kysely (pg): one business row per delivery, failed runs rolled back', async () => {
    const business = await businessTable();
    const db = new Kysely<Record<string, { delivery_id: string }>>({
      dialect: new PostgresDialect({ pool }),
    });
    await exactlyOnce(target, business, kyselyTransactions(db), (tx, id) =>
      tx.insertInto(business).values({ delivery_id: id }).execute(),
    );
  });

  it('postgres.js (sql.begin), the inbox itself on postgres.js too: one business row per delivery', async () => {
    const business = await businessTable();
    const sql = postgres(postgresServer.connectionString, { max: 4, onnotice: () => {} });
    try {
      // An app on postgres.js alone: the inbox's `client` is a three-line wrapper of sql.unsafe.
      const onPostgresJs: Target = {
        ...target,
        inbox: (table) =>
          createPostgresInbox({
            client: { query: async (text, params) => ({ rows: await sql.unsafe(text, params as never[]) }) },
            table,
          }),
      };
      await exactlyOnce(onPostgresJs, business, postgresJsTransactions(sql), (tx, id) =>
        tx`INSERT INTO ${tx(business)} (delivery_id) VALUES (${id})`.then(() => {}),
      );
    } finally {
      await sql.end();
    }
  });

  it('Prisma 7 ($transaction, the engine-less client with @prisma/adapter-pg): one business row per delivery', async () => {
    await pool.query('CREATE TABLE prisma_business (id SERIAL PRIMARY KEY, delivery_id TEXT NOT NULL)');
    const prisma = await generatePrismaClient(postgresServer.connectionString);
    try {
      await exactlyOnce(target, 'prisma_business', prismaTransactions(prisma), (tx, id) =>
        tx.business.create({ data: { deliveryId: id } }),
      );
    } finally {
      await prisma.$disconnect();
      removePrismaClient();
    }
  }, 300_000);

  it('each adapter refuses what is not its driver', () => {
    const adapters: ((db: never) => unknown)[] = [
      postgresJsTransactions,
      drizzleTransactions,
      kyselyTransactions,
    ];
    for (const adapter of adapters)
      expect(() => adapter({} as never)).toThrow(expect.objectContaining({ code: 'options_invalid' }));
  });
});

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SQLITE_FIXTURE = fileURLToPath(new URL('./fixtures/sqlite-orm.ts', import.meta.url));
// better-sqlite3's native build loads on the machine's Node only (the tests run on the pinned Node
// 24, which has node:sqlite): the fixture runs once on each, with the drivers that Node has.
const systemNode = (process.env.PATH ?? '')
  .split(':')
  .find((part) => part && !part.includes('node_modules') && existsSync(join(part, 'node')));

function runSqliteFixture(
  node: string,
): Promise<{ runtime: string; results: { driver: string; error?: string }[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, ['--import', 'tsx', SQLITE_FIXTURE], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{')) reject(new Error(`exited ${code}: ${err.slice(-2000)}${out}`));
      else resolve(JSON.parse(last));
    });
  });
}

describe('inbox with driver and ORM transactions on a SQLite file', () => {
  it('node:sqlite alone and under Drizzle (sqlite-proxy), on the Node the tests run on', async () => {
    const results = await runSqliteCases();
    const runtime = process.version;
    const expected = process.getBuiltinModule?.('node:sqlite')
      ? ['node:sqlite', 'Drizzle (sqlite-proxy) over node:sqlite']
      : [];
    expect(
      results.map((r) => r.driver),
      runtime,
    ).toEqual(expect.arrayContaining(expected));
    expect(results.filter((r) => r.error)).toEqual([]);
  }, 60_000);

  it.runIf(systemNode)(
    'better-sqlite3 alone and under Drizzle, on the machine’s Node',
    async () => {
      const { runtime, results } = await runSqliteFixture(join(systemNode!, 'node'));
      // The machine's Node (20 in CI) has a better-sqlite3 build; where it also has node:sqlite, both run.
      expect(
        results.map((r) => r.driver),
        runtime,
      ).toEqual(expect.arrayContaining(['better-sqlite3', 'Drizzle (better-sqlite3)', 'drift counts']));
      expect(results.filter((r) => r.error)).toEqual([]);
    },
    60_000,
  );
});
