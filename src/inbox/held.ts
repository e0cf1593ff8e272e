/**
 * Which of a service's deliveries an inbox holds: the read behind `inbox.held`, what a reconciler of
 * `@svc/webhooks/manage` compares the service's delivery log with.
 */
import { dedupKeyOfDeliveryId } from '../dedup/key-strategy.js';
import { WebhookError } from '../shared/errors.js';
import type { InboxDb } from './db.js';

// One statement shape per column, whatever the number of ids (padded): SQLite keeps a bounded cache
// of prepared statements, and a list of every length would turn it over.
const CHUNK = 50;

async function found(db: InboxDb, text: (list: string) => string, first: unknown[], values: string[]) {
  const out: string[] = [];
  for (let at = 0; at < values.length; at += CHUNK) {
    const chunk = values.slice(at, at + CHUNK);
    const padded = [...chunk, ...Array<string>(CHUNK - chunk.length).fill(chunk[0]!)];
    const list = padded.map((_, i) => `$${first.length + i + 1}`).join(', ');
    for (const row of await db.query(text(list), [...first, ...padded])) out.push(String(row.delivery_id));
  }
  return out;
}

/**
 * The ids among `deliveryIds` of `service` that have a row, whatever its status: the receiver stored
 * the delivery (a row is written before the service is answered), so it is the inbox's to run. Found
 * by the `'delivery-id'` dedup key first (the table's unique index); the ids left are looked up by
 * the row's `delivery_id`, which also finds the first delivery of a key of another strategy.
 */
export async function heldDeliveries(
  db: InboxDb,
  table: string,
  service: string,
  deliveryIds: readonly string[],
): Promise<Set<string>> {
  if (typeof service !== 'string' || service.includes('\u0000'))
    throw new WebhookError('options_invalid', 'inbox.held: `service` must be a string without U+0000.');
  // No stored id holds U+0000 (PostgreSQL text cannot), so such an id is simply not held.
  const ids = [...new Set(deliveryIds)].filter((id) => typeof id === 'string' && !id.includes('\u0000'));
  const held = new Set<string>();
  // By the dedup key first (the unique index), then the ids left by the row's own delivery id.
  const lookups = [
    ['dedup_key', (id: string) => dedupKeyOfDeliveryId(service, id)],
    ['delivery_id', (id: string) => id],
  ] as const;
  let left = ids;
  for (const [column, keyOf] of lookups) {
    if (left.length === 0) break;
    const rows = await found(
      db,
      (list) => `SELECT delivery_id FROM ${table} WHERE service = $1 AND ${column} IN (${list})`,
      [service],
      left.map(keyOf),
    );
    for (const id of rows) held.add(id);
    left = left.filter((id) => !held.has(id));
  }
  return held;
}
