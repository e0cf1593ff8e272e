/** The transaction adapter of postgres.js: `postgresJsTransactions`. Structural: postgres.js is not imported. */
import { WebhookError } from '../shared/errors.js';
import type { InboxTransactions } from './transactions.js';

/**
 * A postgres.js transaction (`TransactionSql`): `unsafe(text)` resolves to the rows it returned.
 *
 * @example
 * ```ts
 * import type { PostgresJsTransactionLike } from '@svc/webhooks/postgres';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PostgresJsTransactionLike): PostgresJsTransactionLike {
 *   return value;
 * }
 * ```
 */
export interface PostgresJsTransactionLike {
  unsafe(query: string): PromiseLike<ArrayLike<unknown>>;
}

/**
 * A postgres.js `Sql`: `begin(options, work)` runs `work` in a transaction on a connection reserved
 * for it. (The form with options, because TypeScript infers `T` from the last of `begin`'s overloads.)
 *
 * @example
 * ```ts
 * import type { PostgresJsLike, PostgresJsTransactionLike } from '@svc/webhooks/postgres';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PostgresJsLike<PostgresJsTransactionLike>): PostgresJsLike<PostgresJsTransactionLike> {
 *   return value;
 * }
 * ```
 */
export interface PostgresJsLike<T extends PostgresJsTransactionLike> {
  begin(options: string, work: (tx: T) => Promise<unknown>): PromiseLike<unknown>;
}

/**
 * Transactions of postgres.js (`sql.begin`): each row runs in a transaction on a connection postgres.js
 * reserves for it, committed when the handlers resolve and rolled back when they throw; the handlers
 * get that `TransactionSql` as `context.tx`. An inbox on PostgreSQL.
 *
 * @example
 * ```ts
 * import postgres from 'postgres';
 * import { postgresJsTransactions } from '@svc/webhooks/postgres';
 *
 * const sql = postgres(process.env.DATABASE_URL!);
 * const transactions = postgresJsTransactions(sql); // context.tx is a postgres.TransactionSql
 * ```
 */
export function postgresJsTransactions<T extends PostgresJsTransactionLike>(
  sql: PostgresJsLike<T>,
): InboxTransactions<T> {
  if (typeof sql?.begin !== 'function')
    throw new WebhookError('options_invalid', 'postgresJsTransactions: pass a postgres.js `sql` instance.');
  return {
    async transaction<R>(work: (tx: T, execute: (text: string) => Promise<number>) => Promise<R>) {
      // postgres.js resolves `begin` with what the callback returned, after COMMIT (a throw rolls back);
      // boxed, because it would run the items of a returned array as queries.
      const box = (await sql.begin('read write', async (tx) => ({
        result: await work(tx, async (text) => (await tx.unsafe(text)).length),
      }))) as { result: R };
      return box.result;
    },
  };
}
