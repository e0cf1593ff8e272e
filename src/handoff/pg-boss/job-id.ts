/**
 * The pg-boss job id of a dedup key. pg-boss ids are UUIDs and `send` with an id that the queue
 * already holds stores nothing and resolves `null` (its insert is `ON CONFLICT DO NOTHING`), so a
 * deterministic id is pg-boss's own uniqueness keyed on the dedup key: no extra query per delivery.
 */
import { getNodeCrypto } from '../../verify/node-crypto.js';

/**
 * The UUID (version 8, name-based on SHA-256) that the job of dedup key `key` gets. Look a delivery's
 * job up with it: `boss.getJobById(queue, pgBossJobId(key))`.
 */
export function pgBossJobId(key: string): string {
  // node:crypto through process.getBuiltinModule (no import for bundlers to rewrite); pg-boss itself
  // needs Node >= 22.12, where it always exists.
  const crypto = getNodeCrypto();
  if (!crypto)
    throw new Error('pgBossJobId: node:crypto is not available in this runtime (pg-boss needs Node).');
  const hex = crypto.createHash('sha256').update(`svc-webhooks:${key}`).digest('hex');
  // RFC 9562 version 8 (custom) with the RFC variant bits: a valid UUID for Postgres's uuid type.
  const variant = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
