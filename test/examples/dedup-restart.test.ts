/**
 * The example apps started as their READMEs say, stopped dead (SIGKILL) between a delivery and the
 * sender's retry of it, and started again: the SQLite file they keep (`SVC_DEDUP_FILE`) answers the
 * retry as a duplicate, and the handler ran once over both processes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, MAIL_SECRET } from '../receivers/support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'svc-examples-restart-'));
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface App {
  url: string;
  /** The JSON lines the app printed on stdout: one per handler run. */
  handled: string[];
  kill(): Promise<void>;
}

async function start(entry: string, dedupFile: string): Promise<App> {
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${entry}`], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_MAIL_WEBHOOK_SECRET: MAIL_SECRET,
      SVC_CRM_WEBHOOK_SECRET: CRM_SECRET,
      SVC_DEDUP_FILE: dedupFile,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const handled: string[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    handled.push(...chunk.split('\n').filter(Boolean));
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`examples/${entry} exited ${code}: ${stderr}`)));
  });
  return {
    url,
    handled,
    kill: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

describe('the example apps on their SQLite dedup file', () => {
  it.concurrent.each(['express/server.ts', 'fastify/server.ts', 'node-http/server.ts'])(
    'examples/%s restarted between a delivery and its retry: the retry is a duplicate',
    async (entry) => {
      const dedupFile = join(dir, `${entry.split('/')[0]}.sqlite`);
      const delivery = crmDelivery('deal.won');
      const send = (app: App) =>
        fetch(`${app.url}/webhooks/crm`, { method: 'POST', headers: delivery.headers, body: delivery.body });

      const first = await start(entry, dedupFile);
      expect((await send(first)).status).toBe(200);
      expect(first.handled).toEqual([
        JSON.stringify({ service: 'crm', event: 'deal.won', deliveryId: delivery.deliveryId }),
      ]);
      await first.kill();

      const second = await start(entry, dedupFile);
      const retry = await send(second);
      expect(retry.status).toBe(200);
      expect(await retry.json()).toMatchObject({ result: 'duplicate' });
      expect(second.handled).toEqual([]);
      await second.kill();
    },
  );
});
