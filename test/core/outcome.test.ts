/**
 * `onOutcome`: one plain record per delivery in direct mode, at enqueue and per job run in a worker,
 * with the verdict's kind, the code, the duration, the attempt and whether it was a duplicate; no
 * HTTP status (statuses exist only at the HTTP edge). Without the option (nor `telemetry`) the receive path is the one it always was.
 */
import {
  createCrmReceiver,
  createMailReceiver,
  type HandoffTarget,
  type MailReceiverOptions,
  type Outcome,
  WebhookError,
} from '@svc/webhooks';
import { describe, expect, it, vi } from 'vitest';
import type { HandoffJob } from '../../src/handoff/job/types.js';
import { leaseAllows } from '../../src/handoff/worker-checks.js';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery, sign } from '../receivers/support.js';
import { createManualClock } from '../support/clock.js';

function recorder() {
  const outcomes: Outcome[] = [];
  return { outcomes, onOutcome: (outcome: Outcome) => void outcomes.push(outcome) };
}

function arrayTarget(fail = false): HandoffTarget & { jobs: HandoffJob[] } {
  const jobs: HandoffJob[] = [];
  return {
    jobs,
    async enqueue(job) {
      if (fail) throw new Error('queue down');
      if (jobs.some((j) => j.dedupKey === job.dedupKey)) return 'duplicate';
      jobs.push(structuredClone(job));
      return 'enqueued';
    },
  };
}

describe('onOutcome in direct mode', () => {
  it('one outcome per delivery: handled, duplicate, refused, failed, with its kind and code', async () => {
    const clock = createManualClock(Date.parse('2025-01-01T00:00:00Z'));
    const { outcomes, onOutcome } = recorder();
    let fail = true;
    const receiver = createMailReceiver({ secret: MAIL_SECRET, clock, onOutcome, logger: false })
      .on('bounced', () => {
        clock.advance(250);
        if (fail) throw new Error('db down');
      })
      .on('opened', () => {});
    const bounce = mailDelivery('bounced');
    await deliver(receiver, bounce);
    fail = false;
    await deliver(receiver, bounce);
    await deliver(receiver, bounce);
    const forged = mailDelivery('opened');
    forged.headers['x-svcmail-sig'] = sign(forged.body, 'whsec_not_the_secret_0000');
    await deliver(receiver, forged);
    await deliver(receiver, mailDelivery('delivered'));
    const common = { service: 'mail', mode: 'direct', attempt: undefined, queueWaitMs: undefined };
    // The fixture's signed timestamp, 2024-05-01T10:00:00.123Z, against the clock's 2025-01-01.
    const age = Date.UTC(2025, 0, 1) - Date.UTC(2024, 4, 1, 10, 0, 0, 123);
    expect(outcomes).toEqual([
      {
        ...common,
        event: 'bounced',
        deliveryId: bounce.deliveryId,
        kind: 'failed',
        code: 'handler_failed',
        durationMs: 250,
        duplicate: false,
        eventAgeMs: age,
        clockAhead: false,
        handlerMs: 250,
        endToEndMs: undefined,
      },
      {
        ...common,
        event: 'bounced',
        deliveryId: bounce.deliveryId,
        kind: 'handled',
        code: undefined,
        durationMs: 250,
        duplicate: false,
        eventAgeMs: age + 250,
        clockAhead: false,
        handlerMs: 250,
        endToEndMs: age + 500,
      },
      {
        ...common,
        event: 'bounced',
        deliveryId: bounce.deliveryId,
        kind: 'duplicate',
        code: undefined,
        durationMs: 0,
        duplicate: true,
        eventAgeMs: age + 500,
        clockAhead: false,
        handlerMs: undefined,
        endToEndMs: undefined,
      },
      {
        ...common,
        event: undefined,
        deliveryId: forged.deliveryId,
        kind: 'refused',
        code: 'signature_mismatch',
        durationMs: 0,
        duplicate: false,
        eventAgeMs: undefined,
        clockAhead: undefined,
        handlerMs: undefined,
        endToEndMs: undefined,
      },
      expect.objectContaining({ event: 'delivered', kind: 'ignored' }),
    ]);
  });

  it('cuts a delivery id nobody signed to 128 characters', async () => {
    const { outcomes, onOutcome } = recorder();
    const receiver = createCrmReceiver({ secret: CRM_SECRET, onOutcome, logger: false });
    const delivery = crmDelivery('deal.won', { headerDeliveryId: 'x'.repeat(10_000) });
    delivery.headers['x-svc-signature'] = 'sha256=00';
    await deliver(receiver, delivery);
    expect(outcomes[0]!.deliveryId).toBe(`${'x'.repeat(128)}…(+9872 chars)`);
  });

  it('an onOutcome that throws is logged and changes nothing', async () => {
    const entries: string[] = [];
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      logger: ({ message }) => void entries.push(message),
      onOutcome: () => {
        throw new Error('metrics backend down');
      },
    }).on('opened', () => {});
    expect((await deliver(receiver, mailDelivery('opened'))).status).toBe(200);
    expect(entries).toContain('onOutcome threw');
  });

  it('without onOutcome and telemetry, receive and runJob are the pipeline’s own functions (nothing wraps them)', () => {
    const plain = createMailReceiver({ secret: MAIL_SECRET });
    expect(plain.receive.name).toBe('receive');
    expect(plain.runJob.name).toBe('runJob');
    const observed = createMailReceiver({ secret: MAIL_SECRET, onOutcome: () => {} });
    expect(observed.receive.name).not.toBe('receive');
    expect(observed.runJob.name).toBe('observedRunJob');
  });

  it('a telemetry that is not enabled (no SDK) is asked once per delivery and nothing else', async () => {
    const calls: string[] = [];
    const telemetry = {
      enabled: () => {
        calls.push('enabled');
        return false;
      },
      trace: () => Promise.reject(new Error('not called')),
      traceparent: () => 'not called',
      outcome: () => void calls.push('outcome'),
      deadLetter: () => void calls.push('deadLetter'),
    };
    const target = arrayTarget();
    const receiving = createMailReceiver({ secret: MAIL_SECRET, handoff: target, telemetry, logger: false });
    expect((await deliver(receiving, mailDelivery('bounced'))).kind).toBe('queued');
    expect(target.jobs[0]).not.toHaveProperty('traceparent');
    const worker = createMailReceiver({ secret: MAIL_SECRET, telemetry, logger: false }).on(
      'bounced',
      () => {},
    );
    expect((await worker.runJob(target.jobs[0], { attempt: 1 })).kind).toBe('handled');
    worker.reportJobError(new Error('x'), { message: 'dead-lettered', deadLetter: true });
    expect(calls.every((call) => call === 'enabled')).toBe(true);
  });

  it('onOutcome must be a function', () => {
    expect(() =>
      createMailReceiver({
        secret: MAIL_SECRET,
        onOutcome: 'yes' as unknown as MailReceiverOptions['onOutcome'],
      }),
    ).toThrow(/onOutcome must be a function/);
  });
});

describe('onOutcome in hand-off mode', () => {
  it('at enqueue: queued, duplicate, and 503 handoff_unavailable', async () => {
    const { outcomes, onOutcome } = recorder();
    const target = arrayTarget();
    const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: target, onOutcome, logger: false });
    const delivery = mailDelivery('bounced');
    await deliver(receiver, delivery);
    await deliver(receiver, delivery);
    const down = createMailReceiver({
      secret: MAIL_SECRET,
      handoff: arrayTarget(true),
      onOutcome,
      logger: false,
    });
    await deliver(down, mailDelivery('bounced'));
    expect(outcomes.map(({ mode, kind, code, duplicate }) => ({ mode, kind, code, duplicate }))).toEqual([
      { mode: 'enqueue', kind: 'queued', code: undefined, duplicate: false },
      { mode: 'enqueue', kind: 'duplicate', code: undefined, duplicate: true },
      { mode: 'enqueue', kind: 'failed', code: 'handoff_unavailable', duplicate: false },
    ]);
  });

  it('in the worker: one per job run with its attempt; a lease probe is not one', async () => {
    const target = arrayTarget();
    const receiving = createMailReceiver({ secret: MAIL_SECRET, handoff: target, logger: false });
    await deliver(receiving, mailDelivery('bounced'));
    const { outcomes, onOutcome } = recorder();
    let fail = true;
    const worker = createMailReceiver({ secret: MAIL_SECRET, onOutcome, logger: false }).on('bounced', () => {
      if (fail) throw new Error('db down');
    });
    expect(leaseAllows(worker, 5_000)).toBe(true);
    expect(leaseAllows(worker, worker.leaseMs)).toBe(false);
    const job = target.jobs[0]!;
    await worker.runJob(job, { attempt: 1 });
    fail = false;
    await worker.runJob(job, { attempt: 2 });
    await worker.runJob({ ...job, event: 'opened' }, { attempt: 1 });
    expect(outcomes.map(({ mode, kind, code, attempt }) => ({ mode, kind, code, attempt }))).toEqual([
      { mode: 'worker', kind: 'failed', code: 'handler_failed', attempt: 1 },
      { mode: 'worker', kind: 'handled', code: undefined, attempt: 2 },
      { mode: 'worker', kind: 'refused', code: 'job_invalid', attempt: 1 },
    ]);
    expect(outcomes[1]).toMatchObject({ event: 'bounced', deliveryId: job.deliveryId, duplicate: false });
  });

  it('dead letters reported by an engine reach the telemetry, not onOutcome', async () => {
    const deadLetter = vi.fn();
    const telemetry = {
      enabled: () => true,
      trace: (_start: unknown, work: () => Promise<unknown>) => work(),
      traceparent: () => undefined,
      outcome: () => {},
      deadLetter,
    };
    const worker = createMailReceiver({ secret: MAIL_SECRET, telemetry, logger: false });
    worker.reportJobError(new Error('db down'), { message: 'failed, retried' });
    worker.reportJobError(new WebhookError('job_invalid', 'Invalid hand-off job.'), {
      message: 'dead-lettered',
      deadLetter: true,
    });
    worker.reportJobError(new Error('db down'), {
      message: 'dead-lettered after 3 attempts',
      deadLetter: true,
    });
    expect(deadLetter.mock.calls).toEqual([
      [{ service: 'mail', code: 'job_invalid' }],
      [{ service: 'mail', code: undefined }],
    ]);
  });
});
