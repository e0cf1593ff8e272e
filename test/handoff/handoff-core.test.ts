/**
 * The engine-agnostic hand-off core, with a hand-written HandoffTarget that keeps jobs in an array
 * (the contract a queue engine implements): what is enqueued and when, the 503 paths, and
 * `receiver.runJob` (parse again, claim, handlers, complete or release).
 */
import { Buffer } from 'node:buffer';
import { createMailReceiver, type HandoffTarget, jobError, type MailReceiverOptions } from '@svc/webhooks';
import { jobAction } from '@svc/webhooks/handoff';
import { describe, expect, it } from 'vitest';
import type { HandoffJob } from '../../src/handoff/job/types.js';
import { HANDOFF_JOB_VERSION } from '../../src/handoff/job/types.js';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { createManualClock } from '../support/clock.js';
import { resigned } from './job-mac.js';

const MAIL_AT = Date.parse('2024-05-01T10:00:00.123Z'); // the fixture payload's timestamp
const MINUTE = 60_000;

function arrayTarget(): HandoffTarget & { jobs: HandoffJob[] } {
  const jobs: HandoffJob[] = [];
  return {
    jobs,
    async enqueue(job) {
      if (jobs.some((j) => j.dedupKey === job.dedupKey)) return 'duplicate';
      jobs.push(structuredClone(job));
      return 'enqueued';
    },
  };
}

function setup(options: Partial<MailReceiverOptions> = {}) {
  const target = arrayTarget();
  const errors: string[] = [];
  const receiver = createMailReceiver({
    secret: ['whsec_other_secret_0001', MAIL_SECRET],
    handoff: target,
    ...options,
  });
  receiver.onError((_error, info) => errors.push(info.phase));
  return { target, receiver, errors };
}

describe('hand-off receiver', () => {
  it('enqueues a verified delivery as a job without the secret and answers 200 queued, then duplicate', async () => {
    const { target, receiver } = setup();
    let ran = 0;
    receiver.on('delivered', () => {
      ran++;
    });
    const delivery = mailDelivery('delivered');
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'queued' });
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(ran).toBe(0);
    expect(target.jobs).toHaveLength(1);
    const job = target.jobs[0]!;
    expect(job).toMatchObject({
      v: HANDOFF_JOB_VERSION,
      service: 'mail',
      deliveryId: delivery.deliveryId,
      event: 'delivered',
      dedupKey: `mail:delivery:${delivery.deliveryId}`,
      secretIndex: 1,
      headers: { 'x-svcmail-event': 'delivered', 'x-svcmail-id': delivery.deliveryId },
    });
    expect(Buffer.from(job.body, 'base64').equals(Buffer.from(delivery.body))).toBe(true);
    expect(JSON.stringify(job)).not.toContain(MAIL_SECRET);
    expect(JSON.stringify(job)).not.toContain('x-svcmail-sig');
  });

  it('enqueues nothing for a bad signature or an invalid payload', async () => {
    const { target, receiver } = setup();
    expect(
      (await deliver(receiver, mailDelivery('delivered', { secret: 'whsec_wrong_secret_00001' }))).status,
    ).toBe(401);
    expect(
      (await deliver(receiver, mailDelivery('delivered', { rawBody: '{"event":"delivered"' }))).status,
    ).toBe(400);
    expect(target.jobs).toEqual([]);
  });

  it('answers 503 handoff_unavailable with Retry-After when the engine refuses or does not answer in time', async () => {
    const errors: string[] = [];
    const refusing = createMailReceiver({
      secret: MAIL_SECRET,
      handoff: { enqueue: () => Promise.reject(new Error('READONLY')) },
    }).onError((_e, info) => errors.push(info.phase));
    const silent = createMailReceiver({
      secret: MAIL_SECRET,
      handoff: { enqueue: () => new Promise(() => undefined), enqueueTimeoutMs: 20 },
    });
    for (const receiver of [refusing, silent]) {
      expect(await deliver(receiver, mailDelivery('delivered'))).toMatchObject({
        status: 503,
        code: 'handoff_unavailable',
        headers: { 'retry-after': '1' },
      });
    }
    expect(errors).toEqual(['enqueue']);
  });

  it('refuses a handoff option without enqueue when the receiver is created', () => {
    expect(() => createMailReceiver({ secret: MAIL_SECRET, handoff: {} as HandoffTarget })).toThrow(
      expect.objectContaining({ code: 'options_invalid' }),
    );
  });
});

describe('receiver.runJob', () => {
  it('runs the handlers once with attempt and signal, then reports duplicates', async () => {
    const { target, receiver } = setup();
    const seen: unknown[] = [];
    receiver.on('delivered', (event, { attempt, signal, dedupKey }) => {
      seen.push([event.deliveryId, attempt, signal.aborted, dedupKey]);
    });
    const delivery = mailDelivery('delivered');
    await deliver(receiver, delivery);
    const [job] = target.jobs;
    expect((await receiver.runJob(job, { attempt: 3 })).kind).toBe('handled');
    expect((await receiver.runJob(job, { attempt: 4 })).kind).toBe('duplicate');
    expect(seen).toEqual([[delivery.deliveryId, 3, false, `mail:delivery:${delivery.deliveryId}`]]);
  });

  it('never rejects: a handler budget it cannot run with is a failed options_invalid verdict (retried), and no handler runs', async () => {
    const { target, receiver } = setup({ leaseMs: 5_000, timeoutMs: 2_000 });
    let ran = 0;
    receiver.on('delivered', () => {
      ran++;
    });
    await deliver(receiver, mailDelivery('delivered'));
    const [job] = target.jobs;
    for (const timeoutMs of [5_000, 0, 1.5]) {
      const verdict = await receiver.runJob(job, { attempt: 1, timeoutMs });
      expect(verdict).toMatchObject({ kind: 'failed', code: 'options_invalid' });
      expect(jobAction(verdict, { attempt: 1, maxAttempts: 3 }).type).toBe('retry');
    }
    expect(ran).toBe(0);
    expect((await receiver.runJob(job, { attempt: 2, timeoutMs: 4_000 })).kind).toBe('handled');
  });

  it('releases the claim when a handler throws, so the next attempt runs it again', async () => {
    const { target, receiver, errors } = setup();
    let calls = 0;
    receiver.on('delivered', () => {
      calls++;
      if (calls === 1) throw new Error('database down');
    });
    await deliver(receiver, mailDelivery('delivered'));
    const failed = await receiver.runJob(target.jobs[0], { attempt: 1 });
    // The verdict carries the handler's own error; the engine records it as the cause of one error.
    expect(failed).toMatchObject({
      kind: 'failed',
      code: 'handler_failed',
      error: { message: 'database down' },
    });
    expect(jobError(failed)).toMatchObject({
      code: 'handler_failed',
      message: 'The webhook handler failed: database down',
    });
    expect((await receiver.runJob(target.jobs[0], { attempt: 2 })).kind).toBe('handled');
    expect([calls, errors]).toEqual([2, ['handler']]);
  });

  it('refuses bad job data with job_invalid and a reason, running nothing', async () => {
    const { target, receiver } = setup();
    receiver.on('delivered', () => {
      throw new Error('must not run');
    });
    await deliver(receiver, mailDelivery('delivered'));
    const job = target.jobs[0]!;
    const cases: [unknown, string][] = [
      [null, 'job data is not an object'],
      [{ ...job, v: 1 }, 'format version 1 is not 2'],
      [{ ...job, service: 'crm' }, "job of another service, not 'mail'"],
      [{ ...job, dedupKey: '' }, 'dedupKey is not a non-empty string'],
      [{ ...job, mac: undefined }, 'mac is not 64 hex digits'],
      [{ ...job, body: '***' }, 'body is not base64'],
      [{ ...job, deliveryId: 'someone-else' }, "its mac matches none of this worker's secrets"],
      // Consistent with a MAC, not with the body: only a receiver's bug could write it.
      [
        resigned(job, MAIL_SECRET, { deliveryId: 'someone-else' }),
        'deliveryId or event differ from the body and headers',
      ],
    ];
    for (const [data, reason] of cases) {
      const verdict = await receiver.runJob(data);
      expect(verdict).toMatchObject({ kind: 'refused', code: 'job_invalid' });
      expect(jobError(verdict)).toMatchObject({
        code: 'job_invalid',
        message: `Invalid hand-off job: ${reason}.`,
      });
    }
  });

  it('checks maxEventAgeMs as at receipt, however long the job waited', async () => {
    const clock = createManualClock(MAIL_AT + 14 * MINUTE);
    const { target, receiver } = setup({ clock, maxEventAgeMs: 15 * MINUTE });
    let ran = 0;
    receiver.on('delivered', () => {
      ran++;
    });
    expect((await deliver(receiver, mailDelivery('delivered'))).status).toBe(200);
    clock.advance(60 * MINUTE); // an hour-long outage of the workers
    expect((await receiver.runJob(target.jobs[0])).kind).toBe('handled');
    expect(ran).toBe(1);
  });
});
