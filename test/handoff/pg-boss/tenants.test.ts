/**
 * A secret per tenant with a queue engine: CRM deliveries of three tenants, each signed with its
 * tenant's secret and sent to its route (`/webhooks/crm/<tenant>`) over real HTTP, twice (some of
 * the pairs concurrently), to hand-off receivers on pg-boss whose jobs are keyed with `handoffSecret`;
 * a worker process is killed with SIGKILL mid-handler and replaced by one holding the next key, and
 * the receivers rotate to it. Every delivery leaves exactly one business row, written by its route's
 * tenant; the jobs signed with the old key still run; a job whose MAC was made under another key (a
 * tenant's own webhook secret, a key the workers do not hold) is dead-lettered `job_invalid`; a tenant
 * signing another tenant's body on its own route is refused 403 before anything is enqueued.
 */
import { createCrmReceiver, type SecretRequest } from '@svc/webhooks';
import { createPgBossHandoff, listPgBossDeadLetters } from '@svc/webhooks/pg-boss';
import { describe, expect, it } from 'vitest';
import type { HandoffJob } from '../../../src/handoff/job/types.js';
import { crmDelivery, type Delivery } from '../../receivers/support.js';
import { postgresAvailable } from '../../support/servers.js';
import { resigned } from '../job-mac.js';
import {
  post,
  serve,
  spawnWorker,
  startBoss,
  unique,
  until,
  usePostgres,
  type WorkerEnv,
  type WorkerProcess,
} from './support.js';

const TENANTS: Record<string, string> = {
  acme: 'whsec_acme_tenant_secret_0123456789abcdef',
  globex: 'whsec_globex_tenant_secret_0123456789abcdef',
  initech: 'whsec_initech_tenant_secret_0123456789abcdef',
};
const OLD_KEY = 'whsec_handoff_key_2024_0123456789abcdef';
const NEW_KEY = 'whsec_handoff_key_2025_0123456789abcdef';
const PER_PHASE = 240; // deliveries per phase, spread over the three tenants
const tenantOf = ({ path }: SecretRequest) => /^\/webhooks\/crm\/([^/]+)$/.exec(path)?.[1];

describe.runIf(postgresAvailable())('pg-boss hand-off with a secret per tenant', () => {
  const suite = usePostgres();

  it('a worker SIGKILLed mid-handler and the key rotated: one business row per delivery, by its own tenant; jobs under another key dead-lettered job_invalid', async () => {
    const { pool, postgres, cleanup } = suite;
    const schema = unique('pgboss');
    const queue = unique('webhooks');
    const table = unique('dedup');
    const business = unique('deals');
    await pool.query(
      `CREATE TABLE "${business}" (delivery_id text PRIMARY KEY, tenant text NOT NULL, route_tenant text)`,
    );
    const boss = await startBoss(postgres.connectionString, schema);
    cleanup.push(() => boss.stop({ graceful: false }));
    const handoff = createPgBossHandoff({
      boss,
      queue,
      retry: { limit: 20, delaySeconds: 1, backoff: false },
      expireInSeconds: 3,
    });
    await handoff.createQueues();
    /** The receiving app of one deploy: a secret per tenant, its route bound to it, jobs under `keys`. */
    const receiving = async (keys: string[]) => {
      const receiver = createCrmReceiver({
        secret: (route) => TENANTS[tenantOf(route) ?? ''],
        routeTenant: tenantOf,
        handoff,
        handoffSecret: keys,
        logger: () => {},
      });
      const server = await serve(receiver);
      cleanup.push(() => server.close());
      return (tenant: string, delivery: Delivery) => post(`${server.url}webhooks/crm/${tenant}`, delivery);
    };
    const env = (keys: string[]): WorkerEnv => ({
      DATABASE_URL: postgres.connectionString,
      SCHEMA: schema,
      QUEUE: queue,
      DEDUP_TABLE: table,
      CRM_SECRET: '',
      TENANT_SECRETS: JSON.stringify(TENANTS),
      HANDOFF_SECRETS: keys.join(','),
      BUSINESS_TABLE: business,
      HANDLER_MS: '20',
      CONCURRENCY: '4',
      LEASE_MS: '2500',
      EXPIRE_SECONDS: '3',
    });
    const workers: WorkerProcess[] = [];
    cleanup.push(async () => {
      for (const worker of workers) worker.child.kill('SIGKILL');
    });
    const names = Object.keys(TENANTS);
    const phase = () =>
      Array.from({ length: PER_PHASE }, (_, i) => {
        const tenant = names[i % names.length]!;
        return { tenant, delivery: crmDelivery('deal.won', { tenantId: tenant, secret: TENANTS[tenant] }) };
      });
    const statuses: number[] = [];
    const sendAll = async (send: Awaited<ReturnType<typeof receiving>>, items: ReturnType<typeof phase>) => {
      for (let i = 0; i < items.length; i += 24) {
        await Promise.all(
          items.slice(i, i + 24).flatMap(({ tenant, delivery }, j) => {
            const once = async () => statuses.push((await send(tenant, delivery)).status);
            // Every third delivery: both copies at once (a retry racing the first attempt).
            return (i + j) % 3 === 0 ? [once(), once()] : [once()];
          }),
        );
      }
      // The others' second copy, later: a retry after the 2xx was lost.
      for (const [i, { tenant, delivery }] of items.entries())
        if (i % 3 !== 0) statuses.push((await send(tenant, delivery)).status);
    };

    // Deploy 1: receivers and a worker with the old key.
    const sendOld = await receiving([OLD_KEY]);
    const first = await spawnWorker(env([OLD_KEY]));
    workers.push(first);
    const before = phase();
    const sending = sendAll(sendOld, before);
    // Killed while a handler runs, with jobs signed under the old key still queued behind it.
    expect(await until(() => first.done.length >= 40 && first.running.size > 0, 60_000)).toBe(true);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await sending;
    // Deploy 2: the worker holds the new key and the old one first, then the receivers sign with the new.
    const second = await spawnWorker(env([NEW_KEY, OLD_KEY]));
    workers.push(second);
    const sendNew = await receiving([NEW_KEY, OLD_KEY]);
    const after = phase();
    await sendAll(sendNew, after);

    // evil is no tenant of this app; acme signing a body of globex on its own route is refused.
    const forged = crmDelivery('deal.won', { tenantId: 'globex', secret: TENANTS.acme });
    const refused = await sendNew('acme', forged);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'tenant_mismatch' } });

    const all = [...before, ...after];
    expect(statuses).toHaveLength(2 * all.length);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const rows = async () =>
      (await pool.query(`SELECT delivery_id, tenant, route_tenant FROM "${business}"`)).rows as {
        delivery_id: string;
        tenant: string;
        route_tenant: string | null;
      }[];
    expect(await until(async () => (await rows()).length >= all.length, 120_000)).toBe(true);

    // Jobs whose MAC was made under another key: one a tenant could make with its own secret (its
    // job moved to another tenant's route), one under a key no worker holds.
    const [template] = (await boss.findJobs(queue, { limit: 1 })) as unknown as { data: HandoffJob }[];
    const victim = crmDelivery('deal.won', { tenantId: 'globex', secret: TENANTS.globex });
    const job: HandoffJob = {
      ...template!.data,
      deliveryId: victim.deliveryId,
      dedupKey: `crm:delivery:${victim.deliveryId}`,
      headers: { 'x-svc-event': 'deal.won', 'x-svc-delivery': victim.deliveryId },
      route: { path: '/webhooks/crm/globex', params: {} },
      body: Buffer.from(victim.body).toString('base64'),
    };
    await boss.send(queue, resigned(job, TENANTS.acme!) as unknown as object);
    await boss.send(queue, resigned(job, 'whsec_handoff_key_unknown_0123456789') as unknown as object);
    expect(await until(async () => (await listPgBossDeadLetters({ boss, queue })).length >= 2, 60_000)).toBe(
      true,
    );
    const dead = await listPgBossDeadLetters({ boss, queue });
    expect(dead.map((letter) => letter.code)).toEqual(['job_invalid', 'job_invalid']);
    expect(dead.every((letter) => letter.deliveryId === victim.deliveryId)).toBe(true);

    // Exactly one business row per delivery (none lost, none doubled, the forged ones absent), each
    // written for the tenant whose route the delivery came to.
    const written = await rows();
    expect(written).toHaveLength(all.length);
    const byId = new Map(written.map((row) => [row.delivery_id, row]));
    for (const { tenant, delivery } of all)
      expect(byId.get(delivery.deliveryId)).toEqual({
        delivery_id: delivery.deliveryId,
        tenant,
        route_tenant: tenant,
      });
    expect(byId.has(forged.deliveryId)).toBe(false);
    expect(byId.has(victim.deliveryId)).toBe(false);
    // The replacement worker ran jobs the receivers had signed with the old key (rotation).
    const signedWithOld = new Set(before.map(({ delivery }) => delivery.deliveryId));
    const oldRun = second.done.filter((id) => signedWithOld.has(id)).length;
    expect(oldRun).toBeGreaterThan(0);
    // The one killed mid-handler ran again; every delivery finished at least once.
    const done = new Set([...first.done, ...second.done]);
    expect(all.every(({ delivery }) => done.has(delivery.deliveryId))).toBe(true);
    expect(second.stderr()).not.toMatch(/tenant_mismatch/);
    console.log(
      `tenants run: ${all.length} deliveries, ${first.done.length} run before the kill, ${oldRun} old-key jobs run after it`,
    );
  }, 240_000);
});
