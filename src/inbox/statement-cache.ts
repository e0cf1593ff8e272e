/**
 * The SQLite inbox connection's prepared statements, kept by text and bounded. Most texts are the
 * table's fixed statements, run over and over; the list filters add a few shapes. A completion once
 * inlined the row's id, fencing token and time, and a cache without a bound kept one native statement
 * per row run: the worker's memory grew with every row (docs/inbox.md, "Numbers"). The bound keeps
 * any text made per call from doing that again.
 * The least recently used statement goes first, so the fixed ones stay prepared.
 */

/** At most this many prepared statements per connection. */
export const STATEMENT_CACHE_LIMIT = 64;

export interface StatementCache<S> {
  /** The statement of `text`, prepared on first use and again after it was evicted. */
  get(text: string): S;
  /** How many statements are held. */
  readonly size: number;
  clear(): void;
}

export function createStatementCache<S>(
  prepare: (text: string) => S,
  limit = STATEMENT_CACHE_LIMIT,
): StatementCache<S> {
  const statements = new Map<string, S>();
  return {
    get(text) {
      let statement = statements.get(text);
      if (statement === undefined) {
        statement = prepare(text);
        if (statements.size >= limit) statements.delete(statements.keys().next().value!);
      } else statements.delete(text); // re-inserted below: a Map iterates oldest first
      statements.set(text, statement);
      return statement;
    },
    get size() {
      return statements.size;
    },
    clear: () => statements.clear(),
  };
}
