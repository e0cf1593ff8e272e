/**
 * examples/handoff-bullmq started with its one documented command (`npx tsx start.ts`): signed
 * deliveries to the Express receiver are answered 200 and the worker prints one JSON line for each,
 * once, also when a delivery is sent again; SIGTERM stops both processes cleanly.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, type Delivery, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { freePort, type RedisServer, redisAvailable, startRedis } from '../support/servers.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/handoff-bullmq/', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

const post = (url: string, delivery: Delivery) =>
  fetch(url, { method: 'POST', body: delivery.body, headers: delivery.headers });

/** The arguments of the `redis-server` line the example's README gives (its durable settings). */
function readmeRedisArgs(): string[] {
  const readme = readFileSync(`${EXAMPLE}README.md`, 'utf8');
  const line = readme.split('\n').find((candidate) => candidate.startsWith('redis-server '));
  if (!line) throw new Error('examples/handoff-bullmq/README.md starts no redis-server');
  return line.trim().split(/\s+/).slice(1);
}

describe.runIf(redisAvailable())('examples/handoff-bullmq', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    // As the README starts it (the test keeps its own port and directory).
    redis = await startRedis({ args: readmeRedisArgs() });
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('one command starts the receiver and a worker; the worker prints one JSON line per handled event', async () => {
    const port = await freePort();
    // tsx with the repo's tsconfig: @svc/webhooks resolves to the sources, as for the tests.
    const child = spawn(process.execPath, ['--import', 'tsx', `${EXAMPLE}start.ts`], {
      cwd: ROOT,
      env: {
        ...process.env,
        REDIS_URL: redis.url,
        SVC_MAIL_WEBHOOK_SECRET: MAIL_SECRET,
        SVC_CRM_WEBHOOK_SECRET: CRM_SECRET,
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let stderr = '';
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      lines.push(...parts.filter(Boolean));
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      expect(
        await until(() => stderr.includes('receiver listening') && stderr.includes('worker running'), 30_000),
        stderr,
      ).toBe(true);
      const crm = crmDelivery('deal.won');
      const mail = mailDelivery('delivered');
      const answers = [
        await post(`http://127.0.0.1:${port}/webhooks/crm`, crm),
        await post(`http://127.0.0.1:${port}/webhooks/mail`, mail),
        await post(`http://127.0.0.1:${port}/webhooks/crm`, crm),
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(await until(() => lines.length >= 2, 20_000), stderr).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const parsed = lines.map((line) => JSON.parse(line));
      expect(parsed).toHaveLength(2);
      expect(parsed).toEqual(
        expect.arrayContaining([
          { service: 'crm', event: 'deal.won', deliveryId: crm.deliveryId, attempt: 1 },
          { service: 'mail', event: 'delivered', deliveryId: mail.deliveryId, attempt: 1 },
        ]),
      );
      child.kill('SIGTERM');
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code, stderr).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);
});
