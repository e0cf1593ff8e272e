/**
 * The items and conditional expressions of the DynamoDB store. One item per key:
 *
 * | attribute | type | |
 * |---|---|---|
 * | `key` | S | partition key: the dedup key |
 * | `token` | S | the fencing token of the claim (or of the abandoned claim) |
 * | `completed` | BOOL | the record is completed |
 * | `expiresAt` | N | epoch ms: lease end of a claim, expiry of a completed record; `-(until)` for the marker of an abandoned token |
 * | `ttl` | N | epoch seconds: DynamoDB's TTL attribute, so expired items go by themselves |
 *
 * DynamoDB has no server clock in expressions, so "now" is the store's clock, sent as `:now`.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/** Every attribute by a placeholder: `key` and `ttl` are DynamoDB reserved words. */
export const NAMES = {
  '#key': 'key',
  '#token': 'token',
  '#completed': 'completed',
  '#expiresAt': 'expiresAt',
  '#ttl': 'ttl',
} as const;

/** The names one expression uses (DynamoDB refuses unused placeholders). */
export function names(...used: (keyof typeof NAMES)[]): Record<string, string> {
  return Object.fromEntries(used.map((name) => [name, NAMES[name]]));
}

/** The key of `key`'s item. */
export const keyOf = (key: string): Record<string, AttributeValue> => ({ key: { S: key } });

/** A number attribute. */
export const num = (value: number): AttributeValue => ({ N: String(value) });

/** DynamoDB's TTL is in epoch seconds; rounded up, so it never deletes an item before `ms`. */
export const ttlOf = (ms: number): AttributeValue => num(Math.ceil(Math.abs(ms) / 1_000));

/** A whole item. */
export function item(key: string, token: string, completed: boolean, expiresAt: number) {
  return {
    ...keyOf(key),
    token: { S: token },
    completed: { BOOL: completed },
    expiresAt: num(expiresAt),
    ttl: ttlOf(expiresAt),
  };
}

/** An item as read back. */
export interface StoredRecord {
  token: string;
  completed: boolean;
  expiresAt: number;
}

/** The record of a read item, or undefined for no item (or one this store did not write). */
export function recordOf(found: Record<string, AttributeValue> | undefined): StoredRecord | undefined {
  const token = found?.token?.S;
  const expiresAt = Number(found?.expiresAt?.N);
  if (token === undefined || !Number.isFinite(expiresAt)) return undefined;
  return { token, completed: found?.completed?.BOOL === true, expiresAt };
}

// `:now` is the claimer's clock. A claim takes a free key, or an expired record that does not hold
// its own token uncompleted (that is the marker of its abandoned claim, or itself sent again).
export const CLAIM_CONDITION =
  'attribute_not_exists(#key) OR (#expiresAt <= :now AND (#token <> :token OR #completed = :true))';

// The marker of an abandoned token goes over a free or expired key or this token's own lease.
export const ABANDON_CONDITION =
  'attribute_not_exists(#key) OR #expiresAt <= :now OR (#token = :token AND #completed = :false)';

// complete, release and extend: the token still holds a live, uncompleted lease.
export const OWNED_CONDITION = '#token = :token AND #completed = :false AND #expiresAt > :now';
