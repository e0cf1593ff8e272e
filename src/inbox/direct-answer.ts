/**
 * Direct mode's answers from a row: to a delivery whose row is settled or held, to a failed run (after
 * its rollback, recorded on the row through `jobAction`), and to a claim that found the row taken.
 */

import { accepted, failed, type Verdict } from '../core/verdict.js';
import { jobAction } from '../handoff/job-action.js';
import type { InboxRequestRunner } from '../receiver/inbox-receipt.js';
import type { DbRow } from './db.js';
import type { InboxQueue } from './inbox.js';

/** What the answers name of a delivery. */
interface RowFacts {
  readonly deliveryId: string;
  readonly event: string;
  readonly dedupKey: string;
}

const DONE_STATUSES = new Set(['handled', 'superseded', 'dead', 'quarantined']);

/** The answer to a delivery whose row is past running, or held by a live run; undefined to run it. */
export function knownAnswer(
  queue: InboxQueue,
  row: DbRow,
  runner: InboxRequestRunner,
  job: RowFacts,
): Verdict | undefined {
  const facts = { deliveryId: job.deliveryId, event: job.event };
  if (DONE_STATUSES.has(String(row.status)))
    return accepted('duplicate', runner.service, job.deliveryId, job.event);
  const leaseUntil = row.lease_until === null ? 0 : Number(row.lease_until);
  const now = queue.clock.now();
  if (row.status === 'processing' && leaseUntil > now)
    return failed(
      runner.service,
      'delivery_in_progress',
      undefined,
      facts,
      Math.max(1_000, leaseUntil - now),
    );
  return undefined;
}

/** A failed run, after its rollback: the row records it, and the answer is its verdict. */
export async function recordFailure(
  queue: InboxQueue,
  maxAttempts: number,
  runner: InboxRequestRunner,
  job: RowFacts,
  row: { id: number; fence: number; attempt: number },
  verdict: Verdict,
): Promise<Verdict> {
  const action = jobAction(verdict, { attempt: row.attempt, maxAttempts });
  if (action.type === 'done') return verdict;
  const dead = action.type === 'dead-letter';
  const { error } = action;
  const facts = { deliveryId: job.deliveryId, dedupKey: job.dedupKey };
  try {
    await queue.record(row.id, row.fence, {
      status: dead ? 'dead' : 'failed',
      // An inbox worker on the same table leaves it to the service's retries for a lease.
      runAt: queue.clock.now() + runner.leaseMs,
      code: error.code,
      message: error.message,
    });
  } catch (recordError) {
    runner.reportJobError(recordError, {
      ...facts,
      message: 'inbox row could not be updated after its run',
    });
  }
  // A dead row is reported (and counted as a dead letter) even when runJob reported its failure.
  if (dead || !action.reported)
    runner.reportJobError(error, {
      ...facts,
      message: dead ? 'inbox row dead' : 'inbox row failed; the retry runs it again',
      deadLetter: dead,
    });
  // A dead row is kept for a re-drive; the service's retries cannot fix it, so they stop here.
  return dead ? accepted('ignored', runner.service, job.deliveryId, job.event) : verdict;
}

/** The claim found the row taken: by a run that finished meanwhile (a duplicate), or one still running. */
export async function afterBusy(
  queue: InboxQueue,
  job: RowFacts,
  runner: InboxRequestRunner,
  busy: Verdict,
): Promise<Verdict> {
  const row = await queue.state(job.dedupKey);
  return row && DONE_STATUSES.has(String(row.status))
    ? accepted('duplicate', runner.service, job.deliveryId, job.event)
    : busy;
}
