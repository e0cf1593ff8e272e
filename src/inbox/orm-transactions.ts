/**
 * The transaction adapters of two ORMs on PostgreSQL: Drizzle and Kysely. Structural: neither is
 * imported, so an app without them compiles against the entry; each is typed by what the app passes
 * (the shapes written out in the signatures: no named type to learn or import).
 */
import { WebhookError } from '../shared/errors.js';
import type { InboxTransactions } from './transactions.js';

/** Rows of a raw statement as the Drizzle driver resolves them: an array, or `{ rows }`. */
function rowCount(result: unknown): number {
  if (Array.isArray(result)) return result.length;
  const rows = (result as { rows?: unknown } | null)?.rows;
  if (Array.isArray(rows)) return rows.length;
  throw new WebhookError(
    'options_invalid',
    'drizzleTransactions: the driver answered a raw statement with neither rows nor { rows }; use a PostgreSQL driver (node-postgres, postgres.js, PGlite).',
  );
}

/**
 * Transactions of Drizzle on PostgreSQL (`db.transaction`): each row runs in the ORM's transaction,
 * committed when the handlers resolve and rolled back when they throw; the handlers get Drizzle's
 * transaction as `context.tx` (write through it). The inbox's statement runs as `tx.execute(text)`
 * (Drizzle 0.3x and later take raw text). For Drizzle on SQLite, see `drizzleSqliteTransactions`
 * of `@svc/webhooks/sqlite`.
 *
 * @example
 * ```ts
 * import { drizzle } from 'drizzle-orm/node-postgres';
 * import pg from 'pg';
 * import { drizzleTransactions } from '@svc/webhooks/postgres';
 *
 * const db = drizzle(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 * const transactions = drizzleTransactions(db); // context.tx is Drizzle's PgTransaction
 * ```
 */
export function drizzleTransactions<Tx extends { execute(query: string): PromiseLike<unknown> }>(db: {
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}): InboxTransactions<Tx> {
  if (typeof db?.transaction !== 'function')
    throw new WebhookError(
      'options_invalid',
      'drizzleTransactions: pass a Drizzle database (drizzle(pool)).',
    );
  return {
    transaction: (work) => db.transaction((tx) => work(tx, async (text) => rowCount(await tx.execute(text)))),
  };
}

/**
 * A precompiled raw statement as Kysely executes it: what `CompiledQuery.raw(text)` of kysely builds.
 * Not exported: the adapter's signature needs only a transaction whose `executeQuery` takes it.
 */
interface KyselyRawQuery {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly query: {
    readonly kind: 'RawNode';
    readonly sqlFragments: readonly string[];
    readonly parameters: readonly never[];
  };
  readonly queryId: { readonly queryId: string };
}

let queries = 0;

/** `text` as Kysely's `CompiledQuery.raw(text)` has it: no parameters, a query id of its own. */
function rawQuery(text: string): KyselyRawQuery {
  return {
    sql: text,
    parameters: [],
    query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
    queryId: { queryId: `svc-webhooks-inbox-${++queries}` },
  };
}

/**
 * Transactions of Kysely on PostgreSQL (`db.transaction().execute`): each row runs in Kysely's
 * transaction, committed when the handlers resolve and rolled back when they throw; the handlers get
 * its `Transaction<DB>` as `context.tx` (write through it). The inbox's statement runs as a raw
 * compiled query on that transaction.
 *
 * @example
 * ```ts
 * import { Kysely, PostgresDialect } from 'kysely';
 * import pg from 'pg';
 * import { kyselyTransactions } from '@svc/webhooks/postgres';
 *
 * interface Database { won_deals: { deal_id: string } }
 * const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool() }) });
 * const transactions = kyselyTransactions(db); // context.tx is a Transaction<Database>
 * ```
 */
export function kyselyTransactions<
  Tx extends { executeQuery(query: never): PromiseLike<{ rows: ArrayLike<unknown> }> },
>(db: { transaction(): { execute<T>(work: (trx: Tx) => Promise<T>): Promise<T> } }): InboxTransactions<Tx> {
  if (typeof db?.transaction !== 'function')
    throw new WebhookError('options_invalid', 'kyselyTransactions: pass a Kysely instance (new Kysely(…)).');
  return {
    transaction: (work) =>
      db
        .transaction()
        .execute((trx) =>
          work(trx, async (text) => (await trx.executeQuery(rawQuery(text) as never)).rows.length),
        ),
  };
}
