/**
 * The two ids a FIFO queue needs per message: the deduplication id (the job's dedup key, SQS allows
 * 128 characters) and the group id (the entity whose events must stay in order).
 */
import { createHash } from 'node:crypto';
import type { HandoffJob } from '../job/types.js';

/** Longest `MessageDeduplicationId` and `MessageGroupId` SQS accepts. */
const MAX_ID_LENGTH = 128;

/** Characters SQS accepts in both ids: letters, digits and ASCII punctuation. */
const ID_CHARACTERS = /^[\x21-\x7e]+$/;

/** `value` when SQS accepts it as an id; else `sha256:` and its hex digest (71 characters), the same for the same value. */
export function sqsId(value: string): string {
  return value.length <= MAX_ID_LENGTH && ID_CHARACTERS.test(value)
    ? value
    : `sha256:${createHash('sha256').update(value).digest('hex')}`;
}

/** The fields of `data` (CRM) naming the entity an event is about, most specific first. */
const CRM_ENTITY_FIELDS = [
  ['deal_id', 'deal'],
  ['enrollment_id', 'enrollment'],
  ['campaign_id', 'campaign'],
  ['contact_id', 'contact'],
] as const;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;

/**
 * The default ordering key of a job: the entity its event is about, so one entity's events run in
 * the order they were received and other entities' events run beside them.
 *
 * - CRM: `deal:<deal_id>` (deal.*), `enrollment:<enrollment_id>` (journey.*),
 *   `campaign:<campaign_id>`, `contact:<contact_id>`, and `contact:<id>` for contact.created and
 *   contact.updated;
 * - email: `message:<message_id>` (sending events, opened, clicked, unsubscribed);
 * - anything else (account events, a body that is not JSON): `delivery:<deliveryId>`, no order.
 *
 * @example
 * ```ts
 * import { createSqsHandoff, orderingKey } from '@svc/webhooks/sqs';
 *
 * // One group per tenant's deal instead of per deal: wrap the default.
 * const handoff = createSqsHandoff({ client, queueUrl, groupId: (job) => `tenant-a/${orderingKey(job)}` });
 * ```
 */
export function orderingKey(job: HandoffJob): string {
  const fallback = `delivery:${job.deliveryId}`;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(job.body, 'base64').toString('utf8'));
  } catch {
    return fallback;
  }
  if (typeof payload !== 'object' || payload === null) return fallback;
  const record = payload as Record<string, unknown>;
  if (job.service === 'crm') {
    const data = record.data;
    if (typeof data !== 'object' || data === null) return fallback;
    const fields = data as Record<string, unknown>;
    for (const [field, entity] of CRM_ENTITY_FIELDS) {
      const id = text(fields[field]);
      if (id !== undefined) return `${entity}:${id}`;
    }
    const id = job.event.startsWith('contact.') ? text(fields.id) : undefined;
    return id === undefined ? fallback : `contact:${id}`;
  }
  const messageId = text(record.message_id);
  return messageId === undefined ? fallback : `message:${messageId}`;
}
