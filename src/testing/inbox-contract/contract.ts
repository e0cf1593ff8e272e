import { createCrmReceiver } from '../../crm/receiver.js';
import type { Inbox } from '../../inbox/inbox.js';
import { createInboxWorker } from '../../inbox/worker.js';
import type { Clock } from '../../shared/clock.js';
import { createSignedRequest } from '../fixtures/signed-request.js';
import { createRandom, randomUuid } from '../random.js';
import { rowChecks } from './checks-rows.js';
import { runChecks } from './checks-runs.js';
import { CONTRACT_SECRET, type InboxCheckContext, type InboxContractEffects } from './types.js';

/**
 * Options of {@link inboxContract}: how to make the inbox under test and, for the exactly-once check,
 * the app's transactions on the same database.
 *
 * @example
 * ```ts
 * import type { InboxContractOptions } from '@svc/webhooks/testing';
 * import { createSqliteInbox } from '@svc/webhooks/sqlite';
 *
 * let n = 0;
 * const options: InboxContractOptions = {
 *   create: ({ clock }) => createSqliteInbox({ path: 'contract.sqlite', table: `inbox_${++n}`, clock }),
 *   cleanup: (inbox) => inbox.close(),
 * };
 * ```
 */
export interface InboxContractOptions<Tx = never> {
  /**
   * A new inbox on a table of its own (empty, migrated or not), reading the time from `clock` only
   * (epoch ms; it moves when a check says so). Called once per check.
   */
  create(context: { clock: Clock }): Inbox | Promise<Inbox>;
  /** Undoes `create` after each check, passed or failed (drop the table, close the inbox). */
  cleanup?(inbox: Inbox): unknown;
  /**
   * The app's transactions on the inbox's database (`pgTransactions(pool)`, your own adapter), how a
   * handler writes one business row through `context.tx`, and how many rows a delivery has. Adds the
   * exactly-once check; without it that check is left out. Called once for that check.
   */
  effects?(inbox: Inbox): InboxContractEffects<Tx> | Promise<InboxContractEffects<Tx>>;
}

/**
 * The database inbox's contract, as this package's PostgreSQL and SQLite inboxes pass it, for your own
 * setup (your database, table, transaction adapter): one row per delivery, copies answered from their
 * row, quarantine, purge, exactly-once effects in your transaction, fencing, retries with backoff to
 * `dead`, re-drive, and ordering with the stale guard. Returns named checks for any test runner: each
 * `run()` makes an inbox with `create` on a clock of its own (no check waits), sends it signed CRM
 * deliveries, runs an inbox worker, throws an `Error` that names the difference, and calls `cleanup`.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest'; // or node:test, bun:test, jest, mocha
 * import pg from 'pg';
 * import { createPostgresInbox, pgTransactions } from '@svc/webhooks/postgres';
 * import { inboxContract } from '@svc/webhooks/testing';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * let n = 0;
 * describe('our webhook inbox', () => {
 *   for (const check of inboxContract<pg.PoolClient>({
 *     create: ({ clock }) => createPostgresInbox({ client: pool, table: `inbox_check_${++n}`, clock }),
 *     cleanup: () => pool.query('DROP TABLE IF EXISTS inbox_check_' + n),
 *     effects: async () => {
 *       await pool.query('CREATE TABLE IF NOT EXISTS effects (delivery_id text)');
 *       return {
 *         transactions: pgTransactions(pool),
 *         write: (tx, id) => tx.query('INSERT INTO effects VALUES ($1)', [id]),
 *         count: async (id) => (await pool.query('SELECT 1 FROM effects WHERE delivery_id = $1', [id])).rowCount ?? 0,
 *       };
 *     },
 *   })) {
 *     it(check.name, check.run);
 *   }
 * });
 * ```
 */
export function inboxContract<Tx = never>(
  options: InboxContractOptions<Tx>,
): { name: string; run(): Promise<void> }[] {
  const { create, cleanup, effects } = options;
  if (typeof create !== 'function') throw new TypeError('inboxContract: `create` must be a function.');
  const checks = [...rowChecks, ...runChecks].filter((check) => !check.needsEffects || effects);
  return checks.map((check) => ({
    name: check.name,
    async run(): Promise<void> {
      // Real time at the start, so event timestamps look current to the receiver; moved by the checks.
      let now = Date.now();
      const clock: Clock = { now: () => now };
      const random = createRandom();
      const inbox = await create({ clock });
      try {
        await inbox.migrate();
        const receiver = createCrmReceiver({
          secret: CONTRACT_SECRET,
          handoff: inbox,
          clock,
          logger: () => {},
        });
        const context: InboxCheckContext = {
          inbox,
          now: () => now,
          advance: (ms) => {
            now += ms;
          },
          receiver,
          async send(event, data, sendOptions = {}) {
            const deliveryId = sendOptions.deliveryId ?? randomUuid(random);
            const request = await createSignedRequest({
              service: 'crm',
              event,
              data: data as never,
              secret: CONTRACT_SECRET,
              deliveryId,
              now: sendOptions.at ?? now,
            });
            const response = await receiver.handle(request);
            await response.arrayBuffer();
            return { status: response.status, deliveryId };
          },
          worker: (workerOptions = {}) =>
            createInboxWorker({ backoffMs: () => 0, ...workerOptions, receiver, inbox } as never),
          effects: check.needsEffects
            ? ((await effects!(inbox)) as InboxContractEffects<unknown>)
            : undefined,
        };
        await check.run(context);
      } finally {
        await cleanup?.(inbox);
      }
    },
  }));
}
