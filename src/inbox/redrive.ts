/**
 * A re-drive through the app's receiver (docs/inbox.md "When the payload changes"): each quarantined
 * row of the receiver's service is first authenticated and parsed by that receiver (its current
 * schemas and `repair`, no handler run). A row that now parses moves back to `received`, for the
 * worker to run once; one that still fails stays `quarantined`, its latest issues and its first ones
 * kept (kept-issues.ts). Any other row of the target moves as a plain re-drive does, and so does a
 * quarantined row the check refuses for another reason (a changed row: the worker then moves it to
 * `dead` without running it, as it would have).
 */
import { KEPT_AGAIN } from '../core/quarantine.js';
import type { HandoffRunner } from '../handoff/job/types.js';
import type { RowRunOptions } from '../receiver/inbox-runs.js';
import { WebhookError } from '../shared/errors.js';
import type { DbRow } from './db.js';
import { keptIssues } from './kept-issues.js';
import { storedOf } from './rows.js';
import type { InboxFilter } from './types.js';

/** Quarantined rows checked per read. */
const BATCH = 100;

/** What a re-drive target is: one row by id, or a filter. */
export type RedriveTarget = { id: number } | InboxFilter;

/** The inbox's statements a re-drive through a receiver uses. */
export interface RedriveRows {
  /** Moves the target's redrivable rows (of `service`, in `statuses`) back to `received`; how many. */
  move(target: RedriveTarget, only: { service: string; statuses: readonly string[] }): Promise<number>;
  /** The target's quarantined rows of `service` with an id above `after`, oldest first, at most `limit`. */
  quarantined(target: RedriveTarget, service: string, after: number, limit: number): Promise<DbRow[]>;
  /** Moves one quarantined row back to `received`; whether it moved. */
  release(id: number): Promise<boolean>;
  /** Records a quarantined row's new failure. */
  keep(id: number, code: string, message: string): Promise<void>;
}

/** A re-drive's check never holds the row: if a receiver ran handlers anyway, they would find no claim. */
const noClaim = (): never => {
  throw new WebhookError('options_invalid', 'inbox.redrive: a check runs no handler.');
};

function checkReceiver(receiver: unknown): HandoffRunner {
  const runner = receiver as Partial<HandoffRunner> | null;
  if (typeof runner?.runJob !== 'function' || typeof runner.service !== 'string')
    throw new WebhookError(
      'options_invalid',
      'inbox.redrive: `receiver` must be a receiver of this package (createMailReceiver, createCrmReceiver).',
    );
  return runner as HandoffRunner;
}

/** Re-drives `target` through `receiver`; resolves how many rows moved back to `received`. */
export async function redriveThrough(
  rows: RedriveRows,
  target: RedriveTarget,
  receiver: unknown,
  statuses: readonly string[],
): Promise<number> {
  const runner = checkReceiver(receiver);
  const { service } = runner;
  const others = statuses.filter((status) => status !== 'quarantined');
  let moved =
    'id' in target || target.status !== 'quarantined'
      ? await rows.move(target, { service, statuses: others })
      : 0;
  const checks: RowRunOptions = { attempt: 1, hold: noClaim, check: true };
  for (let after = 0; ; ) {
    const batch = await rows.quarantined(target, service, after, BATCH);
    for (const row of batch) {
      const id = Number(row.id);
      after = id;
      let verdict: Awaited<ReturnType<HandoffRunner['runJob']>> | undefined;
      try {
        verdict = await runner.runJob(storedOf(row), checks);
      } catch {
        verdict = undefined; // a malformed row: the worker moves it to `dead`, as a plain re-drive does
      }
      if (
        verdict &&
        (verdict.kind === 'refused' || verdict.kind === 'failed') &&
        KEPT_AGAIN.has(verdict.code)
      ) {
        const { code, message } = verdict.error as WebhookError;
        await rows.keep(id, code, keptIssues(message, code, row.last_error_code, row.last_error_message));
      } else if (await rows.release(id)) moved++;
    }
    if (batch.length < BATCH) return moved;
  }
}
