/**
 * The hand-off key of its own (`handoffSecret`): with a secret per tenant the job MAC is keyed with
 * it, never with a tenant's webhook secret; the first signs, every one verifies (rotation); a job
 * whose MAC was made under another key (a tenant's own secret included) is refused `job_invalid`.
 * A receiver with one static secret keeps the key derived from it. Expected MACs by node:crypto from
 * the format docs/handoff.md states (job-mac.ts), never by the library's code.
 */
import { createCrmReceiver, createMailReceiver, type SecretRequest } from '@svc/webhooks';
import { jobAction } from '@svc/webhooks/handoff';
import { describe, expect, it } from 'vitest';
import type { HandoffJob } from '../../src/handoff/job/types.js';
import { crmDelivery, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { expectedMac, resigned } from './job-mac.js';
import { captureTarget } from './support/capture-target.js';

const TENANTS: Record<string, string[]> = {
  acme: ['whsec_acme_tenant_secret_0123456789abcdef'],
  // Mid-rotation: a new secret first, the old one still accepted.
  globex: ['whsec_globex_new_secret_0123456789abcdef', 'whsec_globex_old_secret_0123456789abcdef'],
};
const KEY_1 = 'whsec_handoff_key_one_0123456789abcdef';
const KEY_2 = 'whsec_handoff_key_two_0123456789abcdef';
const secret = ({ params }: SecretRequest) => TENANTS[params.tenant ?? ''];

/** The job a receiver with a secret per tenant and `handoffSecret` writes for `tenant`'s delivery. */
async function jobOf(tenant: string, handoffSecret: string | string[], signWith = 0): Promise<HandoffJob> {
  const target = captureTarget();
  const receiver = createCrmReceiver({ secret, handoff: target, handoffSecret });
  const delivery = crmDelivery('deal.won', { tenantId: tenant, secret: TENANTS[tenant]![signWith] });
  const verdict = await receiver.receive({
    ...delivery,
    path: `/webhooks/crm/${tenant}`,
    params: { tenant },
  });
  expect(verdict.kind).toBe('queued');
  return target.jobs[0]!;
}

/** A worker of the same app: the same `secret` function and `handoffSecret`; records each run. */
function worker(handoffSecret?: string | string[]) {
  const runs: { deliveryId: string; secretIndex: number; tenant: string | undefined }[] = [];
  const receiver = createCrmReceiver({ secret, ...(handoffSecret && { handoffSecret }) }).onAny(
    (event, { route }) => {
      runs.push({
        deliveryId: event.deliveryId,
        secretIndex: event.secretIndex,
        tenant: route?.params.tenant,
      });
    },
  );
  return { receiver, runs };
}

describe('handoffSecret', () => {
  it('keys the job MAC of a secret per tenant: HMAC under HKDF(handoffSecret[0]), the route and secretIndex under it', async () => {
    const job = await jobOf('globex', [KEY_1, KEY_2], 1);
    expect(job.secretIndex).toBe(1); // globex's old secret verified it
    expect(job.route).toEqual({ path: '/webhooks/crm/globex', params: { tenant: 'globex' } });
    const { mac, ...rest } = job;
    expect(mac).toBe(expectedMac(KEY_1, rest));
    for (const tenantSecret of TENANTS.globex!) expect(mac).not.toBe(expectedMac(tenantSecret, rest));
    expect(JSON.stringify(job)).not.toContain(KEY_1);
  });

  it("a worker verifies with every key (rotation: the old key still verifies) and its handlers see the receiver's secretIndex and the route", async () => {
    const signedWithOld = await jobOf('globex', KEY_1, 1);
    const signedWithNew = await jobOf('acme', [KEY_2, KEY_1]);
    const { receiver, runs } = worker([KEY_2, KEY_1]);
    expect(await receiver.runJob(signedWithOld)).toMatchObject({ kind: 'handled' });
    expect(await receiver.runJob(signedWithNew)).toMatchObject({ kind: 'handled' });
    expect(runs).toEqual([
      { deliveryId: signedWithOld.deliveryId, secretIndex: 1, tenant: 'globex' },
      { deliveryId: signedWithNew.deliveryId, secretIndex: 0, tenant: 'acme' },
    ]);
  });

  it("a job whose MAC was made under another key is refused job_invalid and dead-lettered: a retired key, or a tenant's own webhook secret", async () => {
    const job = await jobOf('acme', KEY_1);
    const { receiver, runs } = worker(KEY_2);
    const retired = await receiver.runJob(job);
    expect(retired).toMatchObject({ kind: 'refused', code: 'job_invalid' });
    expect(jobAction(retired, { attempt: 1, maxAttempts: 5 })).toMatchObject({ type: 'dead-letter' });
    // What tenant acme could forge with the key derived from its own secret: any tenant's job.
    const byTenant = resigned(job, TENANTS.acme![0]!, {
      route: { path: '/webhooks/crm/globex', params: { tenant: 'globex' } },
    });
    expect(await worker(KEY_1).receiver.runJob(byTenant)).toMatchObject({
      kind: 'refused',
      code: 'job_invalid',
    });
    expect(runs).toEqual([]);
  });

  it('is required with a secret function and handoff; a worker without it retries (options_invalid) rather than dead-letter', async () => {
    expect(() => createCrmReceiver({ secret, handoff: captureTarget() })).toThrow(/needs handoffSecret/);
    const job = await jobOf('acme', KEY_1);
    const { receiver, runs } = worker();
    const verdict = await receiver.runJob(job);
    expect(verdict).toMatchObject({ kind: 'failed', code: 'options_invalid' });
    expect(jobAction(verdict, { attempt: 1, maxAttempts: 5 })).toMatchObject({ type: 'retry' });
    expect(runs).toEqual([]);
  });

  it('a receiver with one static secret keeps the key derived from it; with handoffSecret set, that key instead', async () => {
    const derived = captureTarget();
    const own = captureTarget();
    await createMailReceiver({ secret: MAIL_SECRET, handoff: derived }).receive(mailDelivery('delivered'));
    await createMailReceiver({ secret: MAIL_SECRET, handoff: own, handoffSecret: KEY_1 }).receive(
      mailDelivery('delivered'),
    );
    const { mac: derivedMac, ...derivedRest } = derived.jobs[0]!;
    const { mac: ownMac, ...ownRest } = own.jobs[0]!;
    expect(derivedMac).toBe(expectedMac(MAIL_SECRET, derivedRest));
    expect(ownMac).toBe(expectedMac(KEY_1, ownRest));
    // Moving a static-secret app to a key of its own: list the webhook secret after the new key.
    const moving = createMailReceiver({ secret: MAIL_SECRET, handoffSecret: [KEY_1, MAIL_SECRET] }).on(
      'delivered',
      () => {},
    );
    expect(await moving.runJob(derived.jobs[0])).toMatchObject({ kind: 'handled' });
    expect(await moving.runJob(own.jobs[0])).toMatchObject({ kind: 'handled' });
  });
});
