/**
 * `tx(context)` of the inbox worker and of direct mode is typed as the transaction adapter gives it:
 * each adapter of the library: the drivers', the ORMs' (Drizzle, Kysely), and an InboxTransactions of your own.
 */
import type { DatabaseSync } from 'node:sqlite';
import { createCrmReceiver, type HandlerContext } from '@svc/webhooks';
import {
  createDirectInbox,
  createInboxWorker,
  createPostgresInbox,
  type DirectInbox,
  drizzleTransactions,
  type InboxTransactions,
  type InboxWorker,
  kyselyTransactions,
  type PgPoolClientOf,
  type PgQueryable,
  pgTransactions,
  postgresJsTransactions,
} from '@svc/webhooks/postgres';
import { createSqliteInbox, drizzleSqliteTransactions, sqliteTransactions } from '@svc/webhooks/sqlite';
import type Database from 'better-sqlite3';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import type { SqliteRemoteDatabase } from 'drizzle-orm/sqlite-proxy';
import type { Kysely, Transaction } from 'kysely';
import type pg from 'pg';
import type postgres from 'postgres';
import { describe, expectTypeOf, it } from 'vitest';

declare const pool: pg.Pool;
declare const client: pg.Client;
declare const sql: postgres.Sql;
declare const betterSqlite: Database.Database;
declare const nodeSqlite: DatabaseSync;
declare const context: HandlerContext;
type DrizzleTx = Parameters<Parameters<NodePgDatabase['transaction']>[0]>[0];
type DrizzleJsTx = Parameters<Parameters<PostgresJsDatabase['transaction']>[0]>[0];
declare const kysely: Kysely<{ won_deals: { deal_id: string } }>;
declare const drizzle: NodePgDatabase;
declare const drizzleJs: PostgresJsDatabase;
declare const drizzleSqlite: BetterSQLite3Database;
declare const drizzleProxy: SqliteRemoteDatabase;

const receiver = createCrmReceiver({ secret: 'whsec_0123456789abcdef' });
const inbox = createPostgresInbox({ client: pool });
const sqliteInbox = createSqliteInbox({ path: 'app.sqlite' });

describe('tx(context)', () => {
  it("is the pg adapter's client: a PoolClient for a Pool, the Client for a Client", () => {
    const worker = createInboxWorker({ receiver, inbox, transactions: pgTransactions(pool) });
    expectTypeOf(worker.tx(context)).toEqualTypeOf<pg.PoolClient>();
    expectTypeOf(worker).toEqualTypeOf<InboxWorker<pg.PoolClient>>();
    const one = createInboxWorker({ receiver, inbox, transactions: pgTransactions(client) });
    expectTypeOf(one.tx(context)).toEqualTypeOf<pg.Client>();
    // A pool of your own whose connect() only returns a promise: its client.
    interface Checked extends PgQueryable {
      release(destroy?: unknown): void;
      mine: true;
    }
    const own = pgTransactions({ connect: async () => ({}) as Checked, totalCount: 0 });
    expectTypeOf(own).toEqualTypeOf<InboxTransactions<Checked>>();
    expectTypeOf<PgPoolClientOf<pg.Pool>>().toEqualTypeOf<pg.PoolClient>();
  });

  it("is postgres.js's TransactionSql", () => {
    const worker = createInboxWorker({ receiver, inbox, transactions: postgresJsTransactions(sql) });
    expectTypeOf(worker.tx(context)).toEqualTypeOf<postgres.TransactionSql>();
    expectTypeOf(worker.tx(context).unsafe).toBeFunction();
  });

  it('is the SQLite database given: better-sqlite3 or node:sqlite', () => {
    const better = createInboxWorker({
      receiver,
      inbox: sqliteInbox,
      transactions: sqliteTransactions(betterSqlite),
    });
    expectTypeOf(better.tx(context)).toEqualTypeOf<Database.Database>();
    const node = createInboxWorker({
      receiver,
      inbox: sqliteInbox,
      transactions: sqliteTransactions(nodeSqlite),
    });
    expectTypeOf(node.tx(context)).toEqualTypeOf<DatabaseSync>();
  });

  it("is the ORM's transaction for the ORM adapters (Kysely, Drizzle)", () => {
    const k = createInboxWorker({ receiver, inbox, transactions: kyselyTransactions(kysely) });
    expectTypeOf(k.tx(context)).toEqualTypeOf<Transaction<{ won_deals: { deal_id: string } }>>();
    const d = createInboxWorker({ receiver, inbox, transactions: drizzleTransactions(drizzle) });
    expectTypeOf(d.tx(context)).toEqualTypeOf<DrizzleTx>();
    expectTypeOf(drizzleTransactions(drizzleJs)).toEqualTypeOf<InboxTransactions<DrizzleJsTx>>();
    // @ts-expect-error not a Drizzle database
    drizzleTransactions(pool);
    // @ts-expect-error not a Kysely instance
    kyselyTransactions(drizzle);
  });

  it('is the Drizzle database for Drizzle on SQLite', () => {
    const better = createInboxWorker({
      receiver,
      inbox: sqliteInbox,
      transactions: drizzleSqliteTransactions(drizzleSqlite),
    });
    expectTypeOf(better.tx(context)).toEqualTypeOf<BetterSQLite3Database>();
    const proxy = drizzleSqliteTransactions(drizzleProxy, nodeSqlite);
    expectTypeOf(proxy).toEqualTypeOf<InboxTransactions<SqliteRemoteDatabase>>();
  });

  it("direct mode's is typed the same way", () => {
    const direct = createDirectInbox({ inbox, transactions: pgTransactions(pool) });
    expectTypeOf(direct).toEqualTypeOf<DirectInbox<pg.PoolClient>>();
    expectTypeOf(direct.tx(context)).toEqualTypeOf<pg.PoolClient>();
    const onSqlite = createDirectInbox({ inbox: sqliteInbox, transactions: sqliteTransactions(nodeSqlite) });
    expectTypeOf(onSqlite.tx(context)).toEqualTypeOf<DatabaseSync>();
    createCrmReceiver({ secret: 'whsec_0123456789abcdef', handoff: direct });
  });

  it('a worker without an adapter has no transaction to give (never); a worker is still an InboxWorker', () => {
    const bare = createInboxWorker({ receiver, inbox });
    expectTypeOf(bare.tx(context)).toBeNever();
    const typed: InboxWorker = createInboxWorker({ receiver, inbox, transactions: pgTransactions(pool) });
    expectTypeOf(typed.tx(context)).toBeUnknown();
  });

  it('takes a handler context only', () => {
    const worker = createInboxWorker({ receiver, inbox, transactions: pgTransactions(pool) });
    // @ts-expect-error not a handler context
    worker.tx({});
    // @ts-expect-error a context is required
    worker.tx();
    receiver.on('deal.won', async (event, ctx) => {
      await worker.tx(ctx).query('INSERT INTO won_deals (deal_id) VALUES ($1)', [event.data.deal_id]);
    });
  });
});
