import { createMailReceiver } from '@svc/webhooks';
import { createPostgresStore, postgresDedupDDL } from '@svc/webhooks/postgres';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { createManualClock } from '../support/clock.js';
import { forEachStore } from '../support/stores.js';
import { expectBadRowsReplaced } from './bad-rows.js';
import { storeContract } from './contract.js';

forEachStore(storeContract, ['postgres-pg', 'postgres-pglite']);

forEachStore(
  (kind) => {
    describe('postgres specifics', () => {
      const client = () => kind.client as pg.Pool;

      it('creates its table on first use with createTable, idempotently', async () => {
        const table = `lazy_${Date.now()}`;
        const store = createPostgresStore({ client: client(), table, createTable: true });
        expect((await store.claim('k', { leaseMs: 1_000 })).status).toBe('claimed');
        await store.migrate();
        const { rows } = await client().query(`SELECT key, completed FROM ${table}`);
        expect(rows).toEqual([{ key: 'k', completed: false }]);
      });

      it('supports schema-qualified tables and rejects unsafe names', async () => {
        await client().query('CREATE SCHEMA IF NOT EXISTS hooks');
        const store = createPostgresStore({
          client: client(),
          table: 'hooks.dedup',
          clock: createManualClock(),
        });
        await store.migrate();
        expect((await store.claim('k', { leaseMs: 1_000 })).status).toBe('claimed');
        for (const table of ['x; DROP TABLE y', 'a.b.c', '"quoted"', '1abc', '']) {
          expect(() => createPostgresStore({ client: client(), table })).toThrow(/letters, digits/);
        }
        expect(postgresDedupDDL()).toContain('CREATE TABLE IF NOT EXISTS "webhook_dedup"');
      });

      it('uses the database clock without an injected one', async () => {
        const store = createPostgresStore({ client: client(), table: `dbclock_${Date.now()}` });
        await store.migrate();
        const before = Date.now();
        const result = await store.claim('k', { leaseMs: 60_000 });
        if (result.status !== 'claimed') throw new Error('not claimed');
        expect(Math.abs(result.leaseEndsAt - (before + 60_000))).toBeLessThan(60_000);
        expect(await store.complete('k', result.token, { ttlMs: 60_000 })).toBe(true);
      });

      it('reads a row with a NULL (an older table, a hand edit) as expired, with one warning', async () => {
        const table = `older_${Date.now()}`;
        // An older table: no NOT NULL constraints; rows with a NULL in each column.
        await client().query(
          `CREATE TABLE ${table} (key text PRIMARY KEY, token text, completed boolean, expires_at bigint)`,
        );
        const future = Date.now() + 3_600_000;
        await client().query(
          `INSERT INTO ${table} VALUES ('crm:delivery:null-token', NULL, false, ${future}),
            ('crm:delivery:null-completed', 'old', NULL, ${future}),
            ('crm:delivery:null-time', 'old', false, NULL),
            ('crm:delivery:abandon', NULL, NULL, NULL)`,
        );
        const store = createPostgresStore({ client: client(), table });
        await expectBadRowsReplaced(
          store,
          ['crm:delivery:null-token', 'crm:delivery:null-completed', 'crm:delivery:null-time'],
          'crm:delivery:abandon',
        );
      });

      it('reads a record whose expiry is no time (2^63 - 1) as expired: a live lease never holds its key forever', async () => {
        const table = `max_${Date.now()}`;
        const store = createPostgresStore({ client: client(), table });
        await store.migrate();
        await client().query(
          `INSERT INTO ${table} VALUES ('crm:delivery:max-lease', 'old', false, 9223372036854775807),
            ('crm:delivery:max-done', 'old', true, 9223372036854775807),
            ('crm:delivery:min', 'old', false, -9223372036854775808),
            ('crm:delivery:max-abandon', 'old', true, 9223372036854775807)`,
        );
        await expectBadRowsReplaced(
          store,
          ['crm:delivery:max-lease', 'crm:delivery:max-done', 'crm:delivery:min'],
          'crm:delivery:max-abandon',
        );
        expect(await store.prune()).toBe(0);
      });

      it('a receiver key holding U+0000 is hashed (Postgres text cannot hold it); a store call with one is refused', async () => {
        const dedup = await kind.create();
        const receiver = createMailReceiver({ secret: MAIL_SECRET, dedup, dedupKey: 'message-event' });
        let runs = 0;
        receiver.on('delivered', () => void runs++);
        const first = mailDelivery('delivered', { messageId: 'm_\u0000' });
        const again = mailDelivery('delivered', { messageId: 'm_\u0000' }); // another id, same event
        expect(await deliver(receiver, first)).toMatchObject({ status: 200, kind: 'handled' });
        expect(await deliver(receiver, again)).toMatchObject({ status: 200, kind: 'duplicate' });
        expect(runs).toBe(1);
        await expect(dedup.claim('crm:delivery:a\u0000b', { leaseMs: 1_000 })).rejects.toMatchObject({
          code: 'options_invalid',
          message: expect.stringContaining('U+0000'),
        });
      });

      it('reports a missing table as store_unavailable', async () => {
        const store = createPostgresStore({ client: client(), table: 'does_not_exist' });
        await expect(store.claim('k', { leaseMs: 1_000 })).rejects.toMatchObject({
          code: 'store_unavailable',
        });
      });
    });
  },
  ['postgres-pg', 'postgres-pglite'],
);

forEachStore(
  (kind) => {
    it('sends named statements with a pg client (planned once per connection), unnamed when told not to', async () => {
      const pool = kind.client as pg.Pool;
      const table = `named_${Date.now()}`;
      const connection = await pool.connect();
      try {
        const prepared = async () =>
          (await connection.query("SELECT name FROM pg_prepared_statements WHERE name LIKE 'svc_dedup_%'"))
            .rows.length;
        const unnamed = createPostgresStore({ client: connection, table, preparedStatements: false });
        await unnamed.migrate();
        expect((await unnamed.claim('k1', { leaseMs: 1_000 })).status).toBe('claimed');
        expect(await prepared()).toBe(0);
        const store = createPostgresStore({ client: connection, table });
        const claim = await store.claim('k2', { leaseMs: 1_000 });
        if (claim.status !== 'claimed') throw new Error('not claimed');
        expect(await store.complete('k2', claim.token, { ttlMs: 1_000 })).toBe(true);
        expect(await prepared()).toBe(2);
        // A store of another table prepares its own statements, under other names.
        const other = createPostgresStore({ client: connection, table: `${table}_b`, createTable: true });
        expect((await other.claim('k2', { leaseMs: 1_000 })).status).toBe('claimed');
        expect(await prepared()).toBe(3);
      } finally {
        connection.release();
      }
    });

    it('times out with store_unavailable while the table is locked', async () => {
      const pool = kind.client as pg.Pool;
      const table = `locked_${Date.now()}`;
      const store = createPostgresStore({ client: pool, table, callTimeoutMs: 200 });
      await store.migrate();
      const locker = await pool.connect();
      await locker.query(`BEGIN; LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      await expect(store.claim('k', { leaseMs: 1_000 })).rejects.toMatchObject({ code: 'store_unavailable' });
      await locker.query('ROLLBACK');
      locker.release();
      expect((await store.claim('k', { leaseMs: 1_000 })).status).toMatch(/claimed|in_progress/);
    });
  },
  ['postgres-pg'],
);

describe("postgres store and the client's 'error' events", () => {
  // A pg Pool emits 'error' when an idle connection dies (a Postgres restart); with no listener
  // Node throws it and the process ends. No server is needed: the pool never connects here.
  it('listens itself when the pool has no listener, and reports to onClientError', async () => {
    const { default: pgModule } = await import('pg');
    const pool = new pgModule.Pool({ host: '127.0.0.1', port: 1 });
    const seen: unknown[] = [];
    createPostgresStore({ client: pool, onClientError: (error) => seen.push(error) });
    const dropped = new Error('terminating connection due to administrator command');
    expect(() => pool.emit('error', dropped)).not.toThrow();
    expect(seen).toEqual([dropped]);
    await pool.end();
  });

  it('leaves a pool that has its own listener alone', async () => {
    const { default: pgModule } = await import('pg');
    const pool = new pgModule.Pool({ host: '127.0.0.1', port: 1 });
    pool.on('error', () => {});
    createPostgresStore({ client: pool, onClientError: () => expect.unreachable() });
    expect(pool.listenerCount('error')).toBe(1);
    pool.emit('error', new Error('x'));
    await pool.end();
  });
});
