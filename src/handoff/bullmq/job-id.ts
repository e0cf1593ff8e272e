/**
 * BullMQ job ids from dedup keys. BullMQ refuses custom ids that are integers or contain `:` (except
 * its own three-part repeat ids), and dedup keys are `mail:delivery:d_1`, `crm:…:…`: so `%` and `:`
 * are percent-encoded, which is reversible and keeps ids readable in Redis tools.
 */

/**
 * The BullMQ `jobId` of a dedup key: `mail:delivery:d_1` → `mail%3Adelivery%3Ad_1`.
 */
export function bullmqJobId(key: string): string {
  return key.replaceAll('%', '%25').replaceAll(':', '%3A');
}

/**
 * The dedup key of a BullMQ `jobId` made by {@link bullmqJobId}.
 */
export function dedupKeyOfJobId(jobId: string): string {
  return jobId.replaceAll('%3A', ':').replaceAll('%25', '%');
}
