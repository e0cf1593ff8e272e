import { describe, expect, it } from 'vitest';
import { accepted, failed, pipelineError, refused } from '../../src/core/verdict.js';
import { jobAction, jobActionOfError } from '../../src/handoff/job-action.js';
import { WebhookError } from '../../src/shared/errors.js';

const facts = { deliveryId: 'd_1', event: 'bounced' };

describe('jobAction: one translation of a verdict for every engine', () => {
  it('acknowledges handled, duplicate and ignored', () => {
    for (const kind of ['handled', 'duplicate', 'ignored'] as const) {
      const action = jobAction(accepted(kind, 'mail', 'd_1', 'bounced'), { attempt: 1, maxAttempts: 3 });
      expect(action).toMatchObject({ type: 'done', verdict: { kind } });
    }
  });

  it('dead-letters a refusal at once, whatever the attempts left', () => {
    const invalid = new WebhookError('job_invalid', 'bad job');
    const action = jobAction(refused('mail', invalid, facts), { attempt: 1, maxAttempts: 10 });
    expect(action).toEqual({ type: 'dead-letter', error: invalid, exhausted: false, reported: false });
    const noHandler = jobAction(refused('mail', new WebhookError('no_handler', 'none'), facts), {
      attempt: 1,
    });
    expect(noHandler.type).toBe('dead-letter');
  });

  it('retries a failure with attempts left and dead-letters it on the last one', () => {
    const cause = new Error('db down');
    const verdict = failed('mail', 'handler_failed', cause, facts);
    const retry = jobAction(verdict, { attempt: 2, maxAttempts: 3 });
    expect(retry.type).toBe('retry');
    if (retry.type !== 'retry') throw new Error('unreachable');
    expect(retry.error.code).toBe('handler_failed');
    expect(retry.error.cause).toBe(cause);
    expect(retry.reported).toBe(true);
    const last = jobAction(verdict, { attempt: 3, maxAttempts: 3 });
    expect(last).toMatchObject({ type: 'dead-letter', exhausted: true, reported: true });
    expect(jobAction(verdict, { attempt: 50 }).type).toBe('retry');
  });

  it('a store outage is retried and left for the engine to report', () => {
    const action = jobAction(failed('crm', 'store_unavailable', pipelineError('store_unavailable'), facts), {
      attempt: 1,
      maxAttempts: 3,
    });
    expect(action).toMatchObject({ type: 'retry', reported: false });
  });

  it('delays a job whose claim another run holds, for as long as the verdict says, without using an attempt', () => {
    const busy = failed('mail', 'delivery_in_progress', undefined, facts, 12_000);
    expect(jobAction(busy, { attempt: 3, maxAttempts: 3 })).toMatchObject({ type: 'delay', ms: 12_000 });
    const unknown = failed('mail', 'delivery_in_progress', undefined, facts);
    expect(jobAction(unknown, { attempt: 1, busyDelayMs: 700 })).toMatchObject({ type: 'delay', ms: 700 });
  });

  it('puts a failed run back without an attempt while the worker shuts down', () => {
    const verdict = failed('mail', 'handler_timeout', undefined, facts);
    expect(jobAction(verdict, { attempt: 3, maxAttempts: 3, shuttingDown: true })).toMatchObject({
      type: 'delay',
      reported: true,
    });
  });

  it('an error outside the verdict is retried, then dead-lettered on the last attempt', () => {
    expect(jobActionOfError(new Error('boom'), { attempt: 1, maxAttempts: 2 })).toMatchObject({
      type: 'retry',
      error: { code: 'internal_error' },
    });
    expect(jobActionOfError(new Error('boom'), { attempt: 2, maxAttempts: 2 }).type).toBe('dead-letter');
  });
});
