import { WebhookError } from '../../shared/errors.js';
import { isoTime } from '../clock/iso-time.js';
import { asObject, stringField } from '../emitter/input.js';
import { createRandom, randomToken } from '../random.js';
import type { MailApiCredential, MailApiScope } from './mail-api-types.js';

const SCOPES: readonly MailApiScope[] = ['send', 'read', 'domains', 'suppress', 'privacy', 'admin'];

/**
 * An API key record of the mocked email API (`POST /api/v1/auth/api-keys`): never its value. The
 * fields are our decision (email-service §4: "Request and response fields … not shown").
 *
 * @example
 * ```ts
 * const answer = await fetch(`${base}/api/v1/auth/api-keys`, { headers });
 * const [key] = ((await answer.json()) as { data: MailApiKeyRecord[] }).data;
 * ```
 */
export interface MailApiKeyRecord {
  id: string;
  name: string;
  /** `zm_live_` and the first 4 characters after it, to recognise a key without revealing it. */
  prefix: string;
  scopes: MailApiScope[];
  rateLimitPerMinute: number;
  createdAt: string;
  /** Set by `DELETE /api/v1/auth/api-keys/:id`; a revoked key is refused with 401. */
  revokedAt: string | null;
}

interface Stored {
  record: MailApiKeyRecord;
  credential: MailApiCredential;
}

async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

function scopesField(body: Record<string, unknown>): MailApiScope[] {
  const value = body.scopes;
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((s) => (SCOPES as readonly unknown[]).includes(s))
  ) {
    throw new WebhookError('invalid_payload', `scopes must be a non-empty array of: ${SCOPES.join(', ')}.`);
  }
  return [...new Set(value as MailApiScope[])];
}

/**
 * The API keys created through the mocked email API. email-service §2: the full value
 * (`zm_live_<remainder>`) is returned once, only its SHA-256 hash is kept, so a lost key cannot be
 * recovered, only revoked and replaced.
 */
export function createMailApiKeys(now: () => number) {
  const random = createRandom();
  // SHA-256 hex of the value -> the key; the value itself is never stored.
  const byHash = new Map<string, Stored>();
  const byId = new Map<string, Stored>();

  return {
    /** Creates a key; the answer is the only place its value appears. */
    async create(input: unknown): Promise<MailApiKeyRecord & { value: string }> {
      const body = asObject(input, 'The API key');
      const scopes = scopesField(body);
      const name = stringField(body, 'name', false) ?? '';
      if (name.length > 200)
        throw new WebhookError('invalid_payload', 'name must be at most 200 characters.');
      const limit = body.rateLimitPerMinute ?? 1000;
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1_000_000) {
        throw new WebhookError(
          'invalid_payload',
          'rateLimitPerMinute must be a whole number from 1 to 1000000.',
        );
      }
      const value = randomToken(random, 'zm_live_', 24);
      const record: MailApiKeyRecord = {
        id: randomToken(random, 'key_', 8),
        name,
        prefix: value.slice(0, 12),
        scopes,
        rateLimitPerMinute: limit,
        createdAt: isoTime(now()),
        revokedAt: null,
      };
      const stored = { record, credential: { scopes, rateLimitPerMinute: limit } };
      byHash.set(await sha256Hex(value), stored);
      byId.set(record.id, stored);
      return { ...record, scopes: [...scopes], value };
    },
    /** The credential of a created, unrevoked key, and its id, or undefined. */
    async find(value: string): Promise<{ id: string; credential: MailApiCredential } | undefined> {
      if (!value.startsWith('zm_live_')) return undefined;
      const stored = byHash.get(await sha256Hex(value));
      if (!stored || stored.record.revokedAt !== null) return undefined;
      return { id: stored.record.id, credential: stored.credential };
    },
    /** Every created key, newest last, without values. */
    list: (): MailApiKeyRecord[] =>
      [...byId.values()].map((s) => ({ ...s.record, scopes: [...s.record.scopes] })),
    /** Revokes a key at once; revoking it again answers the same record. */
    revoke(id: string): MailApiKeyRecord {
      const stored = byId.get(id);
      if (!stored) throw new WebhookError('not_found', `No API key with id ${id}.`);
      stored.record.revokedAt ??= isoTime(now());
      return { ...stored.record, scopes: [...stored.record.scopes] };
    },
  };
}
