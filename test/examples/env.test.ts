/**
 * The example apps started as their READMEs say (`npx tsx …`), with a secret missing or too short:
 * each exits 1 at once with one line per variable that names it and says what to set (at least 16
 * characters, or the URL form), no stack trace, and a hand-off example says it once, not once per
 * process. Nothing listens or connects first.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function start(entry: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const clean = { ...process.env };
    for (const name of ['SVC_MAIL_WEBHOOK_SECRET', 'SVC_CRM_WEBHOOK_SECRET', 'REDIS_URL', 'DATABASE_URL']) {
      delete clean[name];
    }
    const child = spawn(process.execPath, ['--import', 'tsx', `examples/${entry}`], {
      cwd: ROOT,
      // Port 0: should the check not stop it, the server would still start harmlessly.
      env: { ...clean, PORT: '0', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

const NOT_SET = (name: string) =>
  `${name} is not set: export it (at least 16 characters, e.g. $(openssl rand -hex 24))`;
const TOO_SHORT = (name: string) =>
  `${name} is shorter than 16 characters: use the whole secret the service issued (for a local try, e.g. $(openssl rand -hex 24))`;
const GOOD = 'whsec_examples_env_0123456789';

describe.each(['express/server.ts', 'fastify/server.ts', 'node-http/server.ts'])('examples/%s', (entry) => {
  it('no secrets: exit 1, one line naming each variable and the length rule', async () => {
    const run = await start(entry, {});
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      NOT_SET('SVC_MAIL_WEBHOOK_SECRET'),
      NOT_SET('SVC_CRM_WEBHOOK_SECRET'),
    ]);
  });

  it("a placeholder secret (the old README's whsec_mail): exit 1 naming it, no stack trace", async () => {
    const run = await start(entry, { SVC_MAIL_WEBHOOK_SECRET: 'whsec_mail', SVC_CRM_WEBHOOK_SECRET: GOOD });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(TOO_SHORT('SVC_MAIL_WEBHOOK_SECRET'));
    expect(run.stderr).not.toContain('whsec_mail');
  });
});

describe.each([
  ['handoff-bullmq/start.ts', 'REDIS_URL is not set: export it (e.g. redis://127.0.0.1:6379)'],
  [
    'handoff-pg-boss/start.ts',
    'DATABASE_URL is not set: export it (e.g. postgres://postgres@127.0.0.1:5432/postgres)',
  ],
])('examples/%s', (entry, urlLine) => {
  it('says each problem once (not once per process), exit 1, before connecting anywhere', async () => {
    const run = await start(entry, { SVC_MAIL_WEBHOOK_SECRET: 'whsec_mail', SVC_CRM_WEBHOOK_SECRET: ' \n' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      urlLine,
      TOO_SHORT('SVC_MAIL_WEBHOOK_SECRET'),
      'SVC_CRM_WEBHOOK_SECRET has leading or trailing whitespace (a newline from a .env file?): remove it',
    ]);
  });
});
