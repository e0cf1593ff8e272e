/**
 * The transaction recipes of docs/inbox.md for Drizzle (node-postgres) and Kysely (pg), on a real
 * PostgreSQL: handlers write through the ORM's transaction (`context.tx`), a failed run's write rolls
 * back with it, and each delivery ends with exactly one business row and one handled row.
 */
import { createCrmReceiver } from '@svc/webhooks';
import { createInboxWorker, createPostgresInbox, type InboxTransactions } from '@svc/webhooks/postgres';
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { Kysely, sql as kyselySql, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver } from '../receivers/support.js';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';
import { uniqueTable } from './support.js';

type DrizzleTx = Parameters<Parameters<NodePgDatabase['transaction']>[0]>[0];

/** docs/inbox.md "Drizzle": the transaction the ORM opens, the inbox's statement run with sql.raw. */
function drizzleTransactions(db: NodePgDatabase): InboxTransactions<DrizzleTx> {
  return {
    transaction: (work) =>
      db.transaction((tx) => work(tx, async (text) => (await tx.execute(drizzleSql.raw(text))).rows.length)),
  };
}

/** docs/inbox.md "Kysely". */
function kyselyTransactions<DB>(db: Kysely<DB>): InboxTransactions<Transaction<DB>> {
  return {
    transaction: (work) =>
      db
        .transaction()
        .execute((trx) => work(trx, async (text) => (await kyselySql.raw(text).execute(trx)).rows.length)),
  };
}

describe.runIf(postgresAvailable())('inbox with ORM transactions on PostgreSQL', () => {
  let postgres: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    postgres = await startPostgres();
    pool = new pg.Pool({ connectionString: postgres.connectionString, max: 4 });
    pool.on('error', () => {});
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await postgres?.close();
  });

  async function exactlyOnce(
    transactions: InboxTransactions<never>,
    insert: (tx: never, table: string, deliveryId: string) => Promise<unknown>,
  ) {
    const business = uniqueTable('orm_business');
    await pool.query(`CREATE TABLE ${business} (delivery_id TEXT NOT NULL)`);
    const inbox = createPostgresInbox({ client: pool, table: uniqueTable('orm_inbox') });
    await inbox.migrate();
    const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: () => {} });
    receiver.on('deal.won', async (event, context) => {
      await insert(context.tx as never, business, event.deliveryId);
      // The first run of each delivery fails after its write: the write must roll back with it.
      if (context.attempt === 1) throw new Error('downstream timeout');
    });
    const deliveries = [1, 2, 3].map((i) =>
      crmDelivery('deal.won', { data: { deal_id: `d_${i}`, title: 't', value: i } }),
    );
    for (const delivery of deliveries) expect((await deliver(receiver, delivery)).status).toBe(200);
    const worker = createInboxWorker({ receiver, inbox, transactions, backoffMs: () => 0 });
    expect(await worker.runOnce()).toBe(6);
    const rows = await pool.query(
      `SELECT delivery_id, count(*)::int AS n FROM ${business} GROUP BY delivery_id`,
    );
    expect(rows.rows.map((r) => [r.delivery_id, r.n]).sort()).toEqual(
      deliveries.map((d) => [d.deliveryId, 1]).sort(),
    );
    const handled = await inbox.list({ status: 'handled' });
    expect(handled.rows.map((r) => r.attempts)).toEqual([2, 2, 2]);
  }

  it('Drizzle (node-postgres): one business row per delivery, failed runs rolled back', async () => {
    const db = drizzle(pool);
    await exactlyOnce(drizzleTransactions(db) as InboxTransactions<never>, (tx: DrizzleTx, table, id) =>
      tx.execute(drizzleSql`INSERT INTO ${drizzleSql.identifier(table)} (delivery_id) VALUES (${id})`),
    );
  });

  it('Kysely (pg): one business row per delivery, failed runs rolled back', async () => {
    const db = new Kysely<Record<string, { delivery_id: string }>>({
      dialect: new PostgresDialect({ pool }),
    });
    await exactlyOnce(
      kyselyTransactions(db) as InboxTransactions<never>,
      (tx: Transaction<Record<string, { delivery_id: string }>>, table, id) =>
        tx.insertInto(table).values({ delivery_id: id }).execute(),
    );
  });
});
