/**
 * PostgreSQL stopped (immediate shutdown) and restarted while deliveries are acknowledged and rows run:
 * acknowledgements during the outage are 503 and retried by the service, runs cut short roll back and
 * run again. Every delivery ends with exactly one business row (no unique constraint) and one handled row.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCrmReceiver } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createInboxWorker, createPostgresInbox, pgTransactions } from '@svc/webhooks/postgres';
import { createCrmEmitter, createVirtualClock, type EmitterReport } from '@svc/webhooks/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';

describe.runIf(postgresAvailable())('inbox: PostgreSQL restarted mid-run', () => {
  let postgres: PostgresServer;
  let pool: pg.Pool;
  afterAll(async () => {
    await pool?.end();
    await postgres?.close();
  });

  it('an immediate shutdown and restart: one business row and one handled row per delivery', async () => {
    postgres = await startPostgres();
    pool = new pg.Pool({
      connectionString: postgres.connectionString,
      max: 6,
      connectionTimeoutMillis: 1_000,
      // The test server runs with synchronous_commit=off, which loses acknowledged commits in an
      // immediate shutdown; an inbox's acknowledgement is only as durable as its commit (docs/inbox.md).
      options: '-c synchronous_commit=on',
    });
    pool.on('error', () => {});
    await pool.query('CREATE TABLE business (delivery_id TEXT NOT NULL)');
    const inbox = createPostgresInbox({ client: pool, callTimeoutMs: 1_000 });
    await inbox.migrate();
    const clock = createVirtualClock();
    const settled = new Map<string, string>();
    const onEvent = (report: EmitterReport) => {
      if (report.type === 'delivery_settled') settled.set(report.delivery.id, report.delivery.status);
    };
    const crm = createCrmEmitter({ clock, allowPrivateNetworks: true, seed: 15, onEvent });
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const hook = crm.createWebhook({
      name: 'sales',
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
      events: ['deal.won'],
    });
    // A run whose query hangs through the restart gives up at 3 s (timeoutMs) instead of 29 s.
    const receiver = createCrmReceiver({
      secret: hook.secret,
      handoff: inbox,
      logger: () => {},
      timeoutMs: 3_000,
      leaseMs: 5_000,
    });
    receiver.on('deal.won', async (event, context) => {
      await (context.tx as pg.PoolClient).query('INSERT INTO business (delivery_id) VALUES ($1)', [
        event.deliveryId,
      ]);
      await sleep(10);
    });
    server.on('request', createNodeListener(receiver));
    const worker = createInboxWorker({
      receiver,
      inbox,
      transactions: pgTransactions(pool),
      concurrency: 4,
      leaseMs: 2_000,
      pollMs: 100,
      backoffMs: () => 100,
    });
    worker.start();
    const ids: string[] = [];
    try {
      const sending = (async () => {
        for (let i = 0; i < 90; i += 6) {
          const sent = await Promise.all(
            Array.from({ length: 6 }, (_, j) => crm.emit('deal.won', { deal_id: `d_${i + j}` })),
          );
          ids.push(...sent.flat().map((d) => d.id));
        }
      })();
      // Stop while rows run: their transactions are open, their business rows written, not committed.
      const running = async () =>
        Number(
          (await pool.query("SELECT count(*)::int AS n FROM webhook_inbox WHERE status = 'processing'"))
            .rows[0].n,
        );
      while ((await running()) === 0) await sleep(5);
      await postgres.stop(); // immediate: open transactions are cut
      await sleep(500);
      await postgres.start();
      await sending;
      for (let round = 0; round < 3; round++) await clock.advance(1_000); // the CRM's retries
      await clock.runAll();
      expect(ids).toHaveLength(90);
      expect(ids.filter((id) => settled.get(id) !== 'succeeded')).toEqual([]);
      const deadline = Date.now() + 60_000;
      const handled = async () =>
        Number(
          (await pool.query("SELECT count(*)::int AS n FROM webhook_inbox WHERE status = 'handled'")).rows[0]
            .n,
        );
      while ((await handled().catch(() => 0)) < 90 && Date.now() < deadline) await sleep(100);
      const open = await pool.query(
        "SELECT status, attempts, last_error_code, last_error_message FROM webhook_inbox WHERE status <> 'handled'",
      );
      expect(open.rows).toEqual([]);
      expect(await handled()).toBe(90);
      const twice = await pool.query(
        'SELECT delivery_id FROM business GROUP BY delivery_id HAVING count(*) <> 1',
      );
      expect(twice.rows).toEqual([]);
      const distinct = await pool.query('SELECT DISTINCT delivery_id FROM business');
      expect(new Set(distinct.rows.map((r) => r.delivery_id))).toEqual(new Set(ids));
    } finally {
      await worker.stop();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 120_000);
});
