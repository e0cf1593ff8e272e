/**
 * Direct mode's statements, counted on real PostgreSQL and a real SQLite file: a new delivery that
 * runs costs the read of its row and its insert on the inbox's connection (PostgreSQL, where the
 * client is wrapped) and two statements in the app's transaction, the claim (which carries the stale
 * guard) and the completion. A stale event is superseded in its transaction without running, also
 * when copies of it arrive at once.
 */
import { randomUUID } from 'node:crypto';
import { createCrmReceiver } from '@svc/webhooks';
import { createDirectInbox, createPostgresInbox, type InboxTransactions } from '@svc/webhooks/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, type Delivery, deliver, RETRY_INVITING, sign } from '../receivers/support.js';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';
import { type InboxDatabase, postgresDatabase, sqliteDatabase, uniqueTable } from './support.js';

/** A signed CRM `deal.won` of `dealId` at `timestamp` (the stale guard reads it). */
function won(dealId: string, timestamp: string): Delivery {
  const deliveryId = randomUUID();
  const data = { deal_id: dealId, title: 'T', value: 1 };
  const text = JSON.stringify({ id: deliveryId, event: 'deal.won', timestamp, tenant_id: 't_1', data });
  return {
    body: new TextEncoder().encode(text),
    headers: {
      'content-type': 'application/json',
      'x-svc-event': 'deal.won',
      'x-svc-delivery': deliveryId,
      'x-svc-signature': sign(text, CRM_SECRET),
    },
    deliveryId,
  };
}

/** The app's transactions, with each statement direct mode runs in them recorded. */
function counting(inner: InboxTransactions<unknown>, executed: string[]): InboxTransactions<unknown> {
  return {
    transaction: (work) =>
      inner.transaction((tx, execute) =>
        work(tx, (sql) => {
          executed.push(sql.slice(0, sql.indexOf(' SET ') + 30));
          return execute(sql);
        }),
      ),
  };
}

function suite(name: string, open: () => Promise<{ db: InboxDatabase; statements?: string[] }>) {
  describe(`direct mode's statements on ${name}`, () => {
    let db: InboxDatabase;
    let statements: string[] | undefined;
    beforeAll(async () => {
      ({ db, statements } = await open());
    }, 120_000);
    afterAll(() => db?.close());

    async function setup() {
      const table = uniqueTable('direct_count');
      const inbox = db.inbox({ table });
      await inbox.migrate();
      const executed: string[] = [];
      const handoff = createDirectInbox({ inbox, transactions: counting(db.transactions(), executed) });
      const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff, logger: () => {} });
      const runs: string[] = [];
      receiver.on('deal.won', (event) => {
        runs.push(event.deliveryId);
      });
      const statusOf = async (d: Delivery) =>
        (await db.sql(`SELECT status FROM ${table} WHERE delivery_id = '${d.deliveryId}'`))[0]?.status;
      return { receiver, runs, executed, statusOf };
    }

    it('a new delivery that runs: the read and the insert, then the claim and the completion in the transaction', async () => {
      const { receiver, runs, executed } = await setup();
      const first = won('d_1', '2024-05-01T10:00:01.000Z');
      statements?.splice(0);
      expect((await deliver(receiver, first)).kind).toBe('handled');
      expect(runs).toEqual([first.deliveryId]);
      expect(executed).toHaveLength(2);
      expect(executed[0]).toMatch(/ SET status = 'processing'/);
      expect(executed[1]).toMatch(/ SET status = 'handled'/);
      // PostgreSQL: the inbox's own connection read the row (none yet) and inserted it; no read back.
      if (statements) {
        expect(statements).toHaveLength(2);
        expect(statements[0]).toMatch(/^SELECT /);
        expect(statements[1]).toMatch(/INSERT INTO/);
      }
    });

    it('a stale event is superseded in its transaction and never runs, also as copies arriving at once', async () => {
      const { receiver, runs, executed, statusOf } = await setup();
      const newer = won('d_2', '2024-05-01T10:00:05.000Z');
      expect((await deliver(receiver, newer)).kind).toBe('handled');
      const older = won('d_2', '2024-05-01T10:00:01.000Z');
      executed.splice(0);
      const late = await deliver(receiver, older);
      expect([late.status, late.kind]).toEqual([200, 'ignored']);
      // The claim took nothing (the guard holds), the supersede took the row.
      expect(executed).toHaveLength(2);
      expect(executed[1]).toMatch(/ SET status = 'superseded'/);
      expect(await statusOf(older)).toBe('superseded');

      // Copies of another stale event at once, each retried until it is answered 2xx.
      const stale = won('d_2', '2024-05-01T10:00:02.000Z');
      const answers = await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let round = 0; round < 20; round++) {
            const answer = await deliver(receiver, stale);
            if (answer.status === 200) return answer.kind;
            expect(RETRY_INVITING.has(answer.status)).toBe(true);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          throw new Error('never acknowledged');
        }),
      );
      for (const kind of answers) expect(['ignored', 'duplicate']).toContain(kind);
      expect(await statusOf(stale)).toBe('superseded');
      expect(runs).toEqual([newer.deliveryId]);
    });
  });
}

let postgres: PostgresServer | undefined;
if (postgresAvailable())
  suite('PostgreSQL', async () => {
    postgres = await startPostgres();
    const db = postgresDatabase(postgres.connectionString);
    const pool = new pg.Pool({ connectionString: postgres.connectionString, max: 4 });
    // The server stops at the end of the suite: an idle client it terminates is not a test failure.
    pool.on('error', () => {});
    const statements: string[] = [];
    const counted: InboxDatabase = {
      ...db,
      inbox: (options = {}) =>
        createPostgresInbox({
          client: {
            query: (text: string, params?: unknown[]) => {
              statements.push(text);
              return pool.query(text, params);
            },
          },
          ...options,
        }),
      close: async () => {
        await db.close();
        await pool.end();
        await postgres?.close();
      },
    };
    return { db: counted, statements };
  });
suite('SQLite', async () => ({ db: sqliteDatabase() }));
