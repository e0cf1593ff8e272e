/**
 * Named (prepared) statements for `pg` (node-postgres), which PostgreSQL plans once per connection
 * instead of on every call: whether a client takes `{ name, text, values }`, and a statement's name.
 * Structural: pg is not imported. Shared by the PostgreSQL dedup store and the PostgreSQL inbox.
 */

/** A client's `query` that takes pg's query config (`{ name, text, values }`). */
type NamedQuery = (config: {
  name: string | undefined;
  text: string;
  values: unknown[];
}) => Promise<{ rows: unknown[] }>;

/**
 * Whether `client` is a `pg` Pool (`totalCount`) or Client (`connectionParameters`), which accept a
 * named statement. PGlite and other `query(text, params)` clients do not.
 */
export function isPgClient(client: object): boolean {
  return 'totalCount' in client || 'connectionParameters' in client;
}

/** A statement's name: one per text (FNV-1a of it, 32 bits, and its length), under `prefix`. */
export function statementName(prefix: string, text: string): string {
  let hash = 0x811c9dc5; // names, not security
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return `${prefix}${(hash >>> 0).toString(36)}_${text.length.toString(36)}`;
}

/** Sends `text` with `params` as the named statement `name` (unnamed when undefined) on a pg client. */
export function queryNamed(
  client: { query: unknown },
  name: string | undefined,
  text: string,
  params: unknown[],
): Promise<{ rows: unknown[] }> {
  return (client.query as NamedQuery).call(client, { name, text, values: params });
}
