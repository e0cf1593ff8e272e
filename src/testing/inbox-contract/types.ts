/** What the inbox contract's checks share: the inbox under test, its clock, and how to send it deliveries. */
import type { CrmEventName } from '../../crm/event-names.js';
import type { CrmReceiver } from '../../crm/receiver.js';
import type { Inbox } from '../../inbox/inbox.js';
import type { InboxTransactions } from '../../inbox/transactions.js';
import type { InboxWorker, InboxWorkerOptions } from '../../inbox/worker.js';

/** The secret the checks sign with (a local stand-in, never a real webhook's). */
export const CONTRACT_SECRET = 'whsec_inbox_contract_0123456789abcdefghij';

/**
 * The app's transactions and one business write through them, for the inbox contract's exactly-once
 * check.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { pgTransactions } from '@svc/webhooks/postgres';
 * import type { InboxContractEffects } from '@svc/webhooks/testing';
 *
 * declare const pool: pg.Pool;
 * const effects: InboxContractEffects<pg.PoolClient> = {
 *   transactions: pgTransactions(pool),
 *   write: (tx, id) => tx.query('INSERT INTO effects VALUES ($1)', [id]),
 *   count: async (id) => (await pool.query('SELECT 1 FROM effects WHERE delivery_id = $1', [id])).rowCount ?? 0,
 * };
 * ```
 */
export interface InboxContractEffects<Tx = never> {
  transactions: InboxTransactions<Tx>;
  /** Writes one business row for `deliveryId` through `tx` (the handler's `context.tx`). */
  write(tx: Tx, deliveryId: string): Promise<unknown>;
  /** How many business rows `deliveryId` has, read outside any transaction. */
  count(deliveryId: string): Promise<number>;
}

/** One check's world: a new inbox, a clock that moves only when told, a receiver writing to the inbox. */
export interface InboxCheckContext {
  inbox: Inbox;
  now(): number;
  advance(ms: number): void;
  /** A CRM receiver on the inbox and the clock; handlers are added by the check. */
  receiver: CrmReceiver;
  /** Sends a signed CRM delivery to the receiver; resolves the HTTP status. */
  send(
    event: CrmEventName,
    data: Record<string, unknown>,
    options?: { deliveryId?: string; at?: number },
  ): Promise<{ status: number; deliveryId: string }>;
  /** An inbox worker on `receiver` and `inbox`: no backoff unless given, no transactions unless given. */
  worker(options?: Omit<InboxWorkerOptions<never>, 'receiver' | 'inbox'>): InboxWorker;
  effects?: InboxContractEffects<unknown> | undefined;
}

export interface InboxCheck {
  name: string;
  needsEffects?: boolean;
  run(context: InboxCheckContext): Promise<void>;
}
