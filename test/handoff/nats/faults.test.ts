/**
 * The NATS JetStream hand-off under faults, with nats-server and the workers in processes of their
 * own: CRM deliveries over real HTTP (each sender retrying until a 2xx, as the CRM does), the server
 * paused with SIGSTOP mid-load, then SIGKILLed and restarted on its store directory, and a worker
 * SIGKILLed under load, twice, and restarted. Every acknowledged delivery runs its handler to the end
 * exactly once: none lost, none run twice.
 *
 * NATS_FAULT_DELIVERIES sets the count (300 by default, to keep CI short).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { createCrmReceiver } from '@svc/webhooks';
import { createNatsHandoff } from '@svc/webhooks/nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, type Delivery } from '../../receivers/support.js';
import { type RedisServer, startRedis } from '../../support/servers.js';
import { post, serve, until } from '../pg-boss/support.js';
import { type WorkerProcess, workerProcesses } from '../support/worker-processes.js';
import {
  connectNats,
  createStreams,
  type NatsServer,
  natsAvailable,
  startNats,
  uniqueNames,
} from './support.js';

const WORKER = fileURLToPath(new URL('./fixtures/worker-process.ts', import.meta.url));
const DELIVERIES = Number(process.env.NATS_FAULT_DELIVERIES ?? 300);

describe.runIf(natsAvailable())(
  'NATS JetStream hand-off: server paused, killed and restarted, workers killed',
  () => {
    let nats: NatsServer;
    let redis: RedisServer;
    let nc: NatsConnection;
    const { starts, dones, workers, spawnWorker, rerunAfterKill } = workerProcesses(WORKER);
    beforeAll(async () => {
      [nats, redis] = await Promise.all([startNats(), startRedis()]);
      nc = await connectNats(nats.url);
      console.info(`NATS fault suite: ${DELIVERIES} deliveries on Debian's nats-server`);
    });
    afterAll(async () => {
      for (const worker of workers) worker.child.kill('SIGKILL');
      nats?.child.kill('SIGCONT');
      await nc?.close();
      await nats?.close();
      await redis?.close();
    });

    it(`${DELIVERIES} deliveries: server paused, then killed and restarted mid-load, a worker SIGKILLed twice under load: 0 lost, 0 run twice`, async () => {
      const names = uniqueNames();
      await createStreams(nc, names);
      const receiver = createCrmReceiver({
        secret: CRM_SECRET,
        handoff: createNatsHandoff({ js: jetstream(nc), subjectPrefix: names.prefix, enqueueTimeoutMs: 500 }),
      });
      const http = await serve(receiver);
      const env = {
        NATS_URL: nats.url,
        STREAM: names.stream,
        DEAD_STREAM: names.deadLetterStream,
        PREFIX: names.prefix,
        REDIS_URL: `redis://127.0.0.1:${redis.port}`,
        CRM_SECRET,
        LEASE_MS: '3000',
        HANDLER_MS: '300',
        CONCURRENCY: '10',
      };
      const [first] = await Promise.all([spawnWorker(env), spawnWorker(env)]);

      let refused = 0;
      let acked = 0;
      /** The sender: retries a delivery until it is acknowledged. */
      const send = async (delivery: Delivery) => {
        for (;;) {
          const { status } = await post(http.url, delivery);
          if (status === 200) {
            acked++;
            return;
          }
          refused++;
          await sleep(100);
        }
      };
      const deliveries = Array.from({ length: DELIVERIES }, () => crmDelivery('deal.won'));
      const sending = (async () => {
        for (let i = 0; i < deliveries.length; i += 10) {
          await Promise.all(deliveries.slice(i, i + 10).map(send));
          await sleep(100); // a steady load: the faults below land while deliveries arrive
        }
      })();

      // A worker is killed while its handlers run, then the engine pauses for 1.5 s, then another kill.
      const live = new Set(workers);
      /** Handlers running in each worker killed, when it was killed. */
      const kills: number[] = [];
      const killed: WorkerProcess[] = [];
      const killWhileRunning = async () => {
        const busy = () => [...live].find((w) => w.running.size > 0);
        await until(() => busy() !== undefined, 10_000);
        const target = busy() ?? first!;
        kills.push(target.running.size);
        killed.push(target);
        live.delete(target);
        target.child.kill('SIGKILL');
        await target.exited;
        live.add(await spawnWorker(env));
      };
      await until(() => acked >= DELIVERIES / 6 && starts.size > 0, 60_000);
      await killWhileRunning();
      await until(() => acked >= DELIVERIES / 3, 60_000);
      nats.child.kill('SIGSTOP');
      await sleep(1_500);
      nats.child.kill('SIGCONT');
      await killWhileRunning();
      // The server is killed and started again on its store directory.
      await until(() => acked >= DELIVERIES / 2, 60_000);
      nats.child.kill('SIGKILL');
      await sleep(500);
      await nats.restart();
      await sending;
      expect(await until(() => dones.size === DELIVERIES, 120_000)).toBe(true);
      await sleep(4_500); // past an ack_wait: a message handed out again would run now
      await http.close();
      // A kill between a handler's end and its claim's completion runs it again (at least once: the
      // effect of this fixture's handler is outside the store); every other second run is a defect.
      const again = [...dones.entries()].filter(([, n]) => n > 1);
      const twice = again.filter(([id]) => !rerunAfterKill(id, killed));
      console.info(
        `NATS faults: ${DELIVERIES} acknowledged, ${dones.size} handled, ${twice.length} run twice (${again.length - twice.length} more after a kill before their completion), ${refused} attempts refused (503) while paused or down, ${[...starts.values()].reduce((a, b) => a + b, 0) - DELIVERIES} handler starts cut short; handlers running in the killed workers: ${kills.join(', ')}`,
      );
      expect(refused).toBeGreaterThan(0);
      expect(starts.size).toBe(DELIVERIES);
      expect(kills.every((n) => n > 0)).toBe(true);
      expect(deliveries.filter((d) => !dones.has(d.deliveryId))).toEqual([]);
      expect(twice).toEqual([]);
      // The `handled` lines the excuse above reads are printed.
      expect(new Set(workers.flatMap((w) => [...w.handled])).size).toBeGreaterThan(DELIVERIES / 2);
    }, 180_000);
  },
);
