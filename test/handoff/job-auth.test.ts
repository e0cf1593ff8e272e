/**
 * Hand-off jobs are authenticated: a worker runs only a job a receiver holding one of its secrets
 * wrote after verifying, unchanged. Expected MACs are computed with node:crypto from the format
 * docs/handoff-jobs.md states (job-mac.ts here), never with the library's code. Also: a job whose event has
 * no handler in the worker is refused `no_handler`, and a hand-off receiver refuses a `maxBodyBytes`
 * its jobs could not carry.
 */
import { Buffer } from 'node:buffer';
import { createCrmReceiver, createMailReceiver, jobError, type LogEntry } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import type { HandoffJob } from '../../src/handoff/job/types.js';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery, sign } from '../receivers/support.js';
import { createManualClock } from '../support/clock.js';
import { expectedMac, resigned } from './job-mac.js';
import { captureTarget } from './support/capture-target.js';

const OLD_SECRET = 'whsec_rotation_old_000001';
const NEW_SECRET = 'whsec_rotation_new_000002';
const MAIL_AT = Date.parse('2024-05-01T10:00:00.123Z'); // the fixture payload's timestamp
const MINUTE = 60_000;
const MIB = 1_048_576;

/** The job a hand-off receiver with `secret` writes for a `delivered` delivery signed with `signedWith`. */
async function jobOf(
  secret: string | string[],
  signedWith: string,
  options: { clock?: ReturnType<typeof createManualClock>; maxEventAgeMs?: number } = {},
): Promise<HandoffJob> {
  const target = captureTarget();
  const receiver = createMailReceiver({ secret, handoff: target, ...options });
  const outcome = await deliver(receiver, mailDelivery('delivered', { secret: signedWith }));
  expect(outcome.kind).toBe('queued');
  return target.jobs[0]!;
}

/** A worker-side receiver with `secret`; records each run's event secretIndex. */
function worker(secret: string | string[], options: { clock?: ReturnType<typeof createManualClock> } = {}) {
  const runs: number[] = [];
  const receiver = createMailReceiver({ secret, ...options }).on('delivered', (event) => {
    runs.push(event.secretIndex);
  });
  return { receiver, runs };
}

describe('the job MAC', () => {
  it('is HMAC-SHA256 under HKDF(secret) over the documented encoding, as node:crypto computes it', async () => {
    const job = await jobOf(['whsec_other_secret_0001', MAIL_SECRET], MAIL_SECRET);
    expect(job.v).toBe(2);
    expect(job.secretIndex).toBe(1);
    expect(job.mac).toMatch(/^[0-9a-f]{64}$/);
    const { mac, ...rest } = job;
    expect(mac).toBe(expectedMac(MAIL_SECRET, rest));
    // Neither the secret nor the sender's signature is in the job.
    expect(JSON.stringify(job)).not.toContain(MAIL_SECRET);
    expect(JSON.stringify(job)).not.toContain('sha256=');
  });

  it('a job written by hand (any MAC but the receiver’s) is refused job_invalid and runs nothing', async () => {
    const { receiver, runs } = worker(MAIL_SECRET);
    const delivery = mailDelivery('delivered');
    const forged: HandoffJob = {
      v: 2,
      service: 'mail',
      deliveryId: delivery.deliveryId,
      event: 'delivered',
      dedupKey: `mail:delivery:${delivery.deliveryId}`,
      receivedAt: Date.now(),
      secretIndex: 0,
      headers: { 'x-svcmail-event': 'delivered', 'x-svcmail-id': delivery.deliveryId },
      body: Buffer.from(delivery.body).toString('base64'),
      mac: 'ab'.repeat(32),
    };
    const verdict = await receiver.runJob(forged);
    expect(verdict).toMatchObject({ kind: 'refused', code: 'job_invalid' });
    expect(jobError(verdict)?.message).toBe(
      "Invalid hand-off job: its mac matches none of this worker's secrets.",
    );
    // The same job with the MAC of a secret the worker lacks.
    const otherSecret = resigned(forged, 'whsec_attacker_guess_0001');
    expect(await receiver.runJob(otherSecret)).toMatchObject({ kind: 'refused', code: 'job_invalid' });
    // The control: with the MAC the worker's secret gives, the very same job runs.
    expect((await receiver.runJob(resigned(forged, MAIL_SECRET))).kind).toBe('handled');
    expect(runs).toEqual([0]);
  });

  it('refuses a job when any field the worker trusts changed: key, receivedAt, secretIndex, body, event, deliveryId, headers', async () => {
    const job = await jobOf(MAIL_SECRET, MAIL_SECRET);
    const { receiver, runs } = worker(MAIL_SECRET);
    const other = mailDelivery('bounced', {
      payload: {
        event: 'bounced',
        client_id: 'client_1',
        message_id: 'msg_1',
        to: 'ceo@victim.example',
        provider: 'gmail',
        bounce_type: 'hard',
        timestamp: '2024-05-01T10:00:00.123Z',
      },
    });
    const changes: Partial<HandoffJob>[] = [
      { dedupKey: 'mail:delivery:a-fresh-key' },
      { receivedAt: job.receivedAt + 1 },
      { secretIndex: 99 },
      { body: Buffer.from(other.body).toString('base64') },
      { event: 'bounced' },
      { deliveryId: other.deliveryId },
      { headers: { ...job.headers, 'x-svcmail-event': 'bounced' } },
      { headers: { ...job.headers, 'x-extra': '1' } },
    ];
    for (const change of changes) {
      const verdict = await receiver.runJob({ ...job, ...change });
      expect(verdict, JSON.stringify(Object.keys(change))).toMatchObject({
        kind: 'refused',
        code: 'job_invalid',
        error: { message: "Invalid hand-off job: its mac matches none of this worker's secrets." },
      });
    }
    expect(runs).toEqual([]);
    expect((await receiver.runJob(job)).kind).toBe('handled');
  });

  it('judges maxEventAgeMs at the MAC’d receipt time: a receivedAt moved forward is refused', async () => {
    const clock = createManualClock(MAIL_AT + 14 * MINUTE);
    const job = await jobOf(MAIL_SECRET, MAIL_SECRET, { clock, maxEventAgeMs: 15 * MINUTE });
    clock.advance(60 * MINUTE);
    const receiver = createMailReceiver({ secret: MAIL_SECRET, clock, maxEventAgeMs: 15 * MINUTE }).on(
      'delivered',
      () => {},
    );
    expect(await receiver.runJob({ ...job, receivedAt: MAIL_AT })).toMatchObject({ code: 'job_invalid' });
    expect((await receiver.runJob(job)).kind).toBe('handled');
  });

  it('rotation: a job signed with either secret runs on a worker holding both, in either order', async () => {
    // Receiver not yet rotated (old only), worker already rotated (new first).
    const fromOld = await jobOf(OLD_SECRET, OLD_SECRET);
    const rotated = worker([NEW_SECRET, OLD_SECRET]);
    expect((await rotated.receiver.runJob(fromOld)).kind).toBe('handled');
    // Receiver rotated (new, old), the sender still signs with the old one, worker not yet rotated.
    const viaOld = await jobOf([NEW_SECRET, OLD_SECRET], OLD_SECRET);
    expect(viaOld.secretIndex).toBe(1);
    const notRotated = worker(OLD_SECRET);
    expect((await notRotated.receiver.runJob(viaOld)).kind).toBe('handled');
    // Handlers see the index of the secret in the worker's own list.
    expect([rotated.runs, notRotated.runs]).toEqual([[1], [0]]);
  });

  it('a job from a receiver with another secret is refused', async () => {
    const job = await jobOf(NEW_SECRET, NEW_SECRET);
    const { receiver, runs } = worker(OLD_SECRET);
    expect(await receiver.runJob(job)).toMatchObject({ kind: 'refused', code: 'job_invalid' });
    expect(runs).toEqual([]);
  });
});

describe('a job whose event has no handler in the worker', () => {
  it('is refused no_handler with a warning, not acknowledged as ignored; it runs once a handler is registered', async () => {
    const target = captureTarget();
    const logs: LogEntry[] = [];
    const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: target, logger: (e) => logs.push(e) });
    await deliver(receiver, crmDelivery('deal.won'));
    const verdict = await receiver.runJob(target.jobs[0]);
    expect(verdict).toMatchObject({ kind: 'refused', code: 'no_handler', event: 'deal.won' });
    expect(jobError(verdict)).toMatchObject({ code: 'no_handler' });
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'hand-off job refused: no handler for its event in this worker',
      }),
    );
    let ran = 0;
    receiver.on('deal.won', () => {
      ran++;
    });
    expect((await receiver.runJob(target.jobs[0])).kind).toBe('handled');
    expect(ran).toBe(1);
  });
});

describe('maxBodyBytes in hand-off mode', () => {
  it('refuses at creation a maxBodyBytes whose job a worker could not read back', () => {
    const handoff = captureTarget();
    expect(() => createMailReceiver({ secret: MAIL_SECRET, handoff, maxBodyBytes: 6 * MIB + 1 })).toThrow(
      expect.objectContaining({ code: 'options_invalid' }),
    );
    // Direct mode has no such bound.
    expect(() => createMailReceiver({ secret: MAIL_SECRET, maxBodyBytes: 64 * MIB })).not.toThrow();
  });

  it('a body of the largest size it accepts makes a job the worker runs', async () => {
    const target = captureTarget();
    const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: target, maxBodyBytes: 6 * MIB });
    const base = JSON.stringify({
      event: 'delivered',
      client_id: 'client_1',
      message_id: 'msg_1',
      to: 'ana@example.com',
      provider: 'gmail',
      response: '',
    });
    const text = base.replace('"response":""', `"response":"${'x'.repeat(6 * MIB - base.length)}"`);
    expect(text.length).toBe(6 * MIB);
    const delivery = mailDelivery('delivered', { rawBody: text });
    expect(delivery.headers['x-svcmail-sig']).toBe(sign(text, MAIL_SECRET));
    expect((await deliver(receiver, delivery)).kind).toBe('queued');
    let ran = 0;
    receiver.on('delivered', () => {
      ran++;
    });
    expect((await receiver.runJob(target.jobs[0])).kind).toBe('handled');
    expect(ran).toBe(1);
  });
});
