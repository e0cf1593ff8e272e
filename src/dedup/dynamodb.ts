/**
 * @module
 * `@svc/webhooks/dynamodb`: a {@link DedupStore} in a DynamoDB table, for receivers and workers on
 * AWS Lambda (or anywhere). Takes your `DynamoDBClient` from `@aws-sdk/client-dynamodb` (optional
 * peer); `@aws-sdk/lib-dynamodb` is not needed.
 */
import {
  type AttributeValue,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type Clock, systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import {
  ABANDON_CONDITION,
  CLAIM_CONDITION,
  item,
  keyOf,
  names,
  num,
  OWNED_CONDITION,
  recordOf,
  ttlOf,
} from './dynamodb-items.js';
import { callTimeout, storeUnavailable, withTimeout } from './store-error.js';
import { type ClaimAttempt, storeFromBackend } from './store-kit.js';
import type { AbandonOptions, ClaimOptions, DedupStore, StoreCallOptions } from './types.js';

/**
 * Options of {@link createDynamoDBStore}.
 *
 * @example
 * ```ts
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
 *
 * const options: DynamoDBStoreOptions = { client: new DynamoDBClient({}), table: 'webhook_dedup' };
 * ```
 */
export interface DynamoDBStoreOptions {
  /** Your `DynamoDBClient` (`@aws-sdk/client-dynamodb` v3); never destroyed by the store. */
  client: Pick<DynamoDBClient, 'send'>;
  /** The table (docs/dedup-dynamodb.md has its definition). Default `'webhook_dedup'`. */
  table?: string;
  /**
   * Source of time in epoch ms. Default: this host's clock. DynamoDB has no clock of its own in
   * conditions, so every host sharing the table must keep time (Lambda's and EC2's clocks are
   * synchronised; skew shortens or lengthens leases by as much).
   */
  clock?: Clock;
  /**
   * Longest wait for one call before it fails with `store_unavailable`, in ms (the request is then
   * aborted); `0` for none. Default 3000. It applies to calls made without a `callTimeoutMs` of their
   * own, i.e. by your code directly: a receiver passes its `storeTimeoutMs` (default 2000) with every
   * call it makes, and that one decides. The client's own retries happen inside this bound.
   */
  callTimeoutMs?: number;
}

/**
 * The DynamoDB store: a {@link DedupStore} with `abandon` and `extend`. Items expire by themselves
 * (DynamoDB TTL on `ttl`), so there is no `prune`.
 *
 * @example
 * ```ts
 * const store: DynamoDBStore = createDynamoDBStore({ client });
 * await store.extend(key, token, { leaseMs: 30_000 });
 * ```
 */
export interface DynamoDBStore extends DedupStore {
  abandon(key: string, token: string, options: AbandonOptions): Promise<boolean>;
  extend(key: string, token: string, options: ClaimOptions): Promise<boolean>;
}

// DynamoDB table names: 3 to 255 of these characters.
const TABLE = /^[A-Za-z0-9_.-]{3,255}$/;

/** What a conditional write answers when its condition did not hold. */
const REFUSED = Symbol('refused');

type Command = PutItemCommand | GetItemCommand | UpdateItemCommand | DeleteItemCommand;

/**
 * A {@link DedupStore} in a DynamoDB table. Every write is one conditional request on the key's item
 * (`PutItem`, `UpdateItem` or `DeleteItem` with a `ConditionExpression`), which DynamoDB applies
 * atomically: of any number of concurrent claims of a key exactly one writes. A claim that finds the
 * key taken reads the item once more (`GetItem`, strongly consistent) to answer `in_progress` or
 * `completed`. Items carry a `ttl` attribute for DynamoDB's TTL. Errors and timeouts become
 * `WebhookError('store_unavailable')` (503): the receiver fails closed and the sender retries.
 *
 * @example
 * ```ts
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
 * import { createCrmReceiver } from '@svc/webhooks';
 * import { createDynamoDBStore } from '@svc/webhooks/dynamodb';
 *
 * // Outside the handler: one client and store per Lambda execution environment.
 * const dedup = createDynamoDBStore({ client: new DynamoDBClient({}), table: 'webhook_dedup' });
 * const receiver = createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET!, dedup });
 * ```
 */
export function createDynamoDBStore(options: DynamoDBStoreOptions): DynamoDBStore {
  const { client, table = 'webhook_dedup', clock = systemClock, callTimeoutMs = 3_000 } = options;
  if (typeof client?.send !== 'function') {
    throw new TypeError(
      'createDynamoDBStore: `client` must be a DynamoDBClient from @aws-sdk/client-dynamodb.',
    );
  }
  if (typeof table !== 'string' || !TABLE.test(table)) {
    throw new WebhookError(
      'options_invalid',
      'DynamoDB dedup table must be 3 to 255 letters, digits, underscores, dots or dashes.',
    );
  }
  if (typeof clock?.now !== 'function') {
    throw new WebhookError('options_invalid', 'createDynamoDBStore: clock must have a now() method.');
  }

  /** Sends `command` within the call's bound; a failed condition answers {@link REFUSED}. */
  async function send(command: Command, options?: StoreCallOptions): Promise<unknown> {
    const bound = callTimeout(options, callTimeoutMs);
    const controller = new AbortController();
    try {
      // biome-ignore lint/suspicious/noExplicitAny: one call site for four command types
      const sent = client.send(command as any, { abortSignal: controller.signal });
      return await withTimeout(sent, bound, 'DynamoDB');
    } catch (error) {
      if ((error as { name?: unknown })?.name === 'ConditionalCheckFailedException') return REFUSED;
      controller.abort(); // a timed-out request stops holding a socket
      throw storeUnavailable('DynamoDB', error);
    }
  }

  async function read(key: string, options?: StoreCallOptions) {
    const found = (await send(
      new GetItemCommand({ TableName: table, Key: keyOf(key), ConsistentRead: true }),
      options,
    )) as { Item?: Parameters<typeof recordOf>[0] };
    return recordOf(found.Item);
  }

  /** An UpdateItem or DeleteItem of a lease `token` still holds; `false` when it no longer does. */
  async function owned(
    key: string,
    token: string,
    update: { set: string; values: Record<string, AttributeValue> } | 'delete',
    options?: StoreCallOptions,
  ): Promise<boolean> {
    const condition = {
      TableName: table,
      Key: keyOf(key),
      ConditionExpression: OWNED_CONDITION,
      ExpressionAttributeValues: {
        ':token': { S: token },
        ':false': { BOOL: false },
        ':now': num(clock.now()),
        ...(update === 'delete' ? {} : update.values),
      },
    };
    const command =
      update === 'delete'
        ? new DeleteItemCommand({
            ...condition,
            ExpressionAttributeNames: names('#token', '#completed', '#expiresAt'),
          })
        : new UpdateItemCommand({
            ...condition,
            UpdateExpression: update.set,
            ExpressionAttributeNames: names('#token', '#completed', '#expiresAt', '#ttl'),
          });
    return (await send(command, options)) !== REFUSED;
  }

  return storeFromBackend({
    name: 'DynamoDB',
    async claim(key, token, leaseMs, options): Promise<ClaimAttempt> {
      const now = clock.now();
      const written = await send(
        new PutItemCommand({
          TableName: table,
          Item: item(key, token, false, now + leaseMs),
          ConditionExpression: CLAIM_CONDITION,
          ExpressionAttributeNames: names('#key', '#token', '#completed', '#expiresAt'),
          ExpressionAttributeValues: { ':now': num(now), ':token': { S: token }, ':true': { BOOL: true } },
        }),
        options,
      );
      if (written !== REFUSED) return { status: 'claimed', token, leaseEndsAt: now + leaseMs };
      // The item can change between the refused write and the read (released, expired): the kit
      // asks again. The same claim again (the client retried a request DynamoDB had applied) holds
      // the lease; a token abandoned before its claim ran (a negative marker) is a no-op.
      const record = await read(key, options);
      return record && { ...record, now };
    },
    complete(key, token, ttlMs, options) {
      const expiresAt = clock.now() + ttlMs;
      const set = 'SET #completed = :true, #expiresAt = :expiresAt, #ttl = :ttl';
      const values: Record<string, AttributeValue> = {
        ':true': { BOOL: true },
        ':expiresAt': num(expiresAt),
        ':ttl': ttlOf(expiresAt),
      };
      return owned(key, token, { set, values }, options);
    },
    release: (key, token, options) => owned(key, token, 'delete', options),
    async abandon(key, token, leaseMs, options) {
      const now = clock.now();
      // The marker holds the token with expiresAt = -(now + leaseMs): below every "now", so it reads
      // as expired (free) to every other claimer; the claim condition refuses it to this token's own.
      const written = await send(
        new PutItemCommand({
          TableName: table,
          Item: item(key, token, false, -(now + leaseMs)),
          ConditionExpression: ABANDON_CONDITION,
          ExpressionAttributeNames: names('#key', '#token', '#completed', '#expiresAt'),
          ExpressionAttributeValues: { ':now': num(now), ':token': { S: token }, ':false': { BOOL: false } },
        }),
        options,
      );
      if (written !== REFUSED) return true;
      // Left alone: done when completed, not yet while another token's lease holds the key.
      return (await read(key, options))?.completed === true;
    },
    extend(key, token, leaseMs, options) {
      const expiresAt = clock.now() + leaseMs;
      const set = 'SET #expiresAt = :expiresAt, #ttl = :ttl';
      return owned(
        key,
        token,
        { set, values: { ':expiresAt': num(expiresAt), ':ttl': ttlOf(expiresAt) } },
        options,
      );
    },
  });
}
