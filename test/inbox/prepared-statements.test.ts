/**
 * The PostgreSQL inbox sends its fixed statements (the insert, the worker's claim and completion) as
 * named (prepared) statements on a `pg` client, so the server plans each once per connection
 * instead of on every call; a client that is not pg (PGlite, a wrapper with `query(text, params)`)
 * and `preparedStatements: false` get plain `query(text, params)` calls; postgres.js prepares when
 * asked (`unsafe` does not by default: node_modules/postgres/src/index.js). Read from the server's
 * `pg_prepared_statements` of the inbox's own connection (real PostgreSQL), not from timings.
 */
import { createMailReceiver } from '@svc/webhooks';
import { createInboxWorker, createPostgresInbox, type PostgresQueryable } from '@svc/webhooks/postgres';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type PostgresServer, startPostgres } from '../support/servers.js';
import { uniqueTable } from './support.js';

const quiet = () => {};
const ROWS = 12;
/** The worker claims up to 16 rows ahead of its free slot: one claim for the 12, one that finds none. */
const CLAIMS = 2;

describe('the PostgreSQL inbox’s named statements', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(() => server?.close());

  /** Writes ROWS deliveries and runs them through the worker on `client`; all of them handled. */
  async function writeAndRun(client: PostgresQueryable, preparedStatements?: boolean): Promise<void> {
    const table = uniqueTable('prepared');
    const inbox = createPostgresInbox({
      client,
      table,
      ...(preparedStatements === undefined ? {} : { preparedStatements }),
    });
    await inbox.migrate();
    const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet });
    let handled = 0;
    receiver.on('delivered', () => {
      handled++;
    });
    for (let i = 0; i < ROWS; i++)
      expect((await deliver(receiver, mailDelivery('delivered', { messageId: `msg_${i}` }))).status).toBe(
        200,
      );
    const worker = createInboxWorker({ receiver, inbox });
    let ran = 0;
    while (ran < ROWS) ran += await worker.runOnce();
    expect(handled).toBe(ROWS);
    expect((await inbox.stats()).rows.handled).toBe(ROWS);
  }

  it('a pg Client: the insert, the claim and the completion are prepared once and executed for every row', async () => {
    const client = new pg.Client({ connectionString: server.connectionString });
    await client.connect();
    try {
      await writeAndRun(client);
      const { rows } = await client.query(
        `SELECT name, statement, generic_plans + custom_plans AS runs FROM pg_prepared_statements WHERE name LIKE 'svc_inbox_%'`,
      );
      const runsOf = (pattern: RegExp) =>
        rows.filter((row) => pattern.test(row.statement)).map((row) => Number(row.runs));
      expect(runsOf(/^WITH ins AS \(INSERT INTO/)).toEqual([ROWS]);
      // One claim takes up to 16 rows ahead (one in flight): one for the 12, one more that found nothing.
      expect(runsOf(/^WITH RECURSIVE ready/)).toEqual([CLAIMS]);
      expect(runsOf(/^UPDATE \S+ SET status = 'handled'/)).toEqual([ROWS]);
    } finally {
      await client.end();
    }
  });

  it('preparedStatements: false, and a client that is not pg: plain query(text, params), nothing prepared', async () => {
    const client = new pg.Client({ connectionString: server.connectionString });
    await client.connect();
    try {
      await writeAndRun(client, false);
      // Any client with query(text, params) (PGlite, a wrapper): what it is given is text.
      const given = new Set<string>();
      const wrapper: PostgresQueryable = {
        query: (text, params) => {
          given.add(typeof text);
          return client.query(text, params);
        },
      };
      await writeAndRun(wrapper);
      expect([...given]).toEqual(['string']);
      const { rows } = await client.query('SELECT name FROM pg_prepared_statements');
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it('postgres.js through the documented client: `unsafe(text, params, { prepare: true })` prepares each statement once', async () => {
    // One connection, so the server's prepared statements read below are the inbox's.
    const sql = postgres(server.connectionString, { max: 1, onnotice: quiet });
    try {
      await writeAndRun({
        query: async (text, params) => ({
          rows: await sql.unsafe(text, params as never[], { prepare: true }),
        }),
      });
      const rows = await sql.unsafe(
        'SELECT statement, generic_plans + custom_plans AS runs FROM pg_prepared_statements',
      );
      const runsOf = (pattern: RegExp) =>
        rows.filter((row) => pattern.test(row.statement)).map((row) => Number(row.runs));
      expect(runsOf(/^WITH RECURSIVE ready/)).toEqual([CLAIMS]);
      expect(runsOf(/^UPDATE \S+ SET status = 'handled'/)).toEqual([ROWS]);
    } finally {
      await sql.end();
    }
  });
});
