/**
 * examples/handoff-pg-boss started with its one documented command (`npx tsx start.ts`): a signed
 * delivery to the Fastify receiver is answered 200 and the worker prints one JSON line for it, once,
 * also when the delivery is sent again.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, MAIL_SECRET, mailDelivery } from '../../receivers/support.js';
import { freePort, type PostgresServer, postgresAvailable, startPostgres } from '../../support/servers.js';
import { post, until } from './support.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/handoff-pg-boss/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe.runIf(postgresAvailable())('examples/handoff-pg-boss', () => {
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgres();
  });
  afterAll(async () => {
    await postgres?.close();
  });

  it('one command starts the receiver and a worker; the worker prints one JSON line per handled event', async () => {
    const port = await freePort();
    // tsx with the repo's tsconfig: @svc/webhooks resolves to the sources, as for the tests.
    const child = spawn(process.execPath, ['--import', 'tsx', `${EXAMPLE}start.ts`], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: postgres.connectionString,
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
      const mail = mailDelivery('bounced', {
        payload: {
          event: 'bounced',
          client_id: 'c',
          message_id: 'm',
          to: 'a@example.com',
          provider: 'gmail',
        },
      });
      expect((await post(`http://127.0.0.1:${port}/webhooks/crm`, crm)).status).toBe(200);
      expect((await post(`http://127.0.0.1:${port}/webhooks/mail`, mail)).status).toBe(200);
      expect((await post(`http://127.0.0.1:${port}/webhooks/crm`, crm)).status).toBe(200);
      expect(await until(() => lines.length >= 2, 20_000), stderr).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const parsed = lines.map((line) => JSON.parse(line));
      expect(parsed).toHaveLength(2);
      expect(parsed).toEqual(
        expect.arrayContaining([
          { service: 'crm', event: 'deal.won', deliveryId: crm.deliveryId, attempt: 1 },
          { service: 'mail', event: 'bounced', deliveryId: mail.deliveryId, attempt: 1 },
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
