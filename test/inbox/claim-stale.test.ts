/**
 * The stale guard read in the claim: each claimed row comes back with `stale`, and the worker sends
 * the `supersede` statement only for a row that is stale. A row older than a handled one of its key is
 * superseded without running; a row of another key, or of none, runs without that statement. Real
 * PostgreSQL (statements counted on the way to the server) and a real SQLite file.
 */
import { createCrmReceiver } from '@svc/webhooks';
import { createInboxWorker, createPostgresInbox } from '@svc/webhooks/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver } from '../receivers/support.js';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';
import { type InboxDatabase, postgresDatabase, sqliteDatabase, uniqueTable } from './support.js';

const quiet = () => {};
const SUPERSEDE = /^UPDATE \S+ SET status = 'superseded'/;

function suite(name: string, open: () => Promise<{ db: InboxDatabase; statements?: string[] }>) {
  describe(`the claim reads the stale guard on ${name}`, () => {
    let db: InboxDatabase;
    let statements: string[] | undefined;
    beforeAll(async () => {
      ({ db, statements } = await open());
    }, 120_000);
    afterAll(() => db?.close());

    it('supersedes the stale row without running it; the others run without a supersede statement', async () => {
      const table = uniqueTable('stale');
      const inbox = db.inbox({ table });
      await inbox.migrate();
      const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: quiet });
      const runs: string[] = [];
      receiver.on('deal.won', (event) => {
        runs.push(event.data.deal_id);
      });
      const won = (deal: string) =>
        crmDelivery('deal.won', { data: { deal_id: deal, title: 'Renewal', value: 5 } });
      for (const delivery of [won('d_old'), won('d_new'), won('d_other')])
        expect((await deliver(receiver, delivery)).status).toBe(200);
      // d_old and d_new share a key: d_new is a later event of it, already handled.
      const rows = await db.sql(`SELECT id FROM ${table} ORDER BY id`);
      const [oldId, newId, otherId] = rows.map((r) => Number(r.id));
      await db.sql(`UPDATE ${table} SET ordering_key = 'crm:deal:same', event_at = 100 WHERE id = ${oldId}`);
      await db.sql(
        `UPDATE ${table} SET ordering_key = 'crm:deal:same', event_at = 200, status = 'handled', handled_at = 1 WHERE id = ${newId}`,
      );
      await db.sql(`UPDATE ${table} SET ordering_key = NULL WHERE id = ${otherId}`);

      statements?.splice(0);
      const worker = createInboxWorker({ receiver, inbox });
      expect(await worker.runOnce()).toBe(2);
      expect(runs).toEqual(['d_other']);
      const status = async (id: number | undefined) => (await inbox.show(id!))?.status;
      expect(await status(oldId)).toBe('superseded');
      expect(await status(otherId)).toBe('handled');
      if (statements) expect(statements.filter((text) => SUPERSEDE.test(text))).toHaveLength(1);

      // A keyed row that is not stale (nothing later of its key handled) runs, with no supersede.
      await db.sql(`UPDATE ${table} SET status = 'received', run_at = 0, event_at = 300 WHERE id = ${oldId}`);
      statements?.splice(0);
      expect(await worker.runOnce()).toBe(1);
      expect(runs).toEqual(['d_other', 'd_old']);
      expect(await status(oldId)).toBe('handled');
      if (statements) expect(statements.filter((text) => SUPERSEDE.test(text))).toEqual([]);
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
    const counted = {
      ...db,
      inbox: (options: { table?: string } = {}) =>
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
