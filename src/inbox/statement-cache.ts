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
  // The most recently used text and its statement: a text run again at once (a receipt's insert, one
  // after the other) is already last in the order, so the Map is not touched.
  let lastText: string | undefined;
  let last: S | undefined;
  return {
    get(text) {
      if (text === lastText) return last!;
      let statement = statements.get(text);
      if (statement === undefined) {
        statement = prepare(text);
        if (statements.size >= limit) statements.delete(statements.keys().next().value!);
      } else statements.delete(text); // re-inserted below: a Map iterates oldest first
      statements.set(text, statement);
      lastText = text;
      last = statement;
      return statement;
    },
    get size() {
      return statements.size;
    },
    clear() {
      statements.clear();
      lastText = undefined;
      last = undefined;
    },
  };
}
