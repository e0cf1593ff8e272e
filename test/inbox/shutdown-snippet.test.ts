/**
 * docs/inbox-worker.md's worker example, run as written as a process on a real PostgreSQL: after SIGTERM it
 * exits by itself. The example's signal listener replaces Node's default exit, so a listener that
 * stops the worker but leaves the server listening (or the pool open) keeps the process alive: this
 * test then ends on its timeout, not on an exit. A preload only moves the example's port to a free
 * one and says when the server listens; the example's text is not changed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPostgresInbox } from '@svc/webhooks/postgres';
import { build } from 'esbuild';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Outside node_modules: esbuild applies tsconfig's paths (the @svc/webhooks entries) only there.
const DIR = join(ROOT, `.tmp/shutdown-snippet-${process.pid}`);

/** The ```ts block under `heading` in a docs page, verbatim. */
function snippetUnder(page: string, heading: string): string {
  const text = `\n${readFileSync(join(ROOT, page), 'utf8')}`;
  const section = text.slice(text.indexOf(`\n${heading}\n`));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error(`no ts block under ${heading} in ${page}`);
  return block[1];
}

// Port 0 for every listen, and one 'listening' line on stdout once the server is up.
const PRELOAD = `import { Server } from 'node:net';
const listen = Server.prototype.listen;
Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number') args[0] = 0;
  this.once('listening', () => process.stdout.write('listening\\n'));
  return listen.apply(this, args);
};
`;

describe.runIf(postgresAvailable())("docs/inbox-worker.md's worker example", () => {
  let postgres: PostgresServer;
  let child: ChildProcess | undefined;
  afterAll(async () => {
    child?.kill('SIGKILL'); // a process that did not exit (the failure this test finds)
    await postgres?.close();
  });

  it('exits by itself on SIGTERM: the server closed, the worker stopped, the pool ended', async () => {
    postgres = await startPostgres();
    const pool = new pg.Pool({ connectionString: postgres.connectionString });
    await createPostgresInbox({ client: pool }).migrate();
    await pool.end();

    mkdirSync(DIR, { recursive: true });
    const source = join(DIR, 'example.ts');
    writeFileSync(source, snippetUnder('docs/inbox-worker.md', '# The worker, and exactly-once effects'));
    writeFileSync(join(DIR, 'preload.mjs'), PRELOAD);
    await build({
      entryPoints: [source],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: join(DIR, 'example.mjs'),
      tsconfig: join(ROOT, 'tsconfig.json'),
      external: ['pg'],
      banner: {
        js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
      },
      logLevel: 'silent',
    });
    const proc = spawn(process.execPath, ['--import', join(DIR, 'preload.mjs'), join(DIR, 'example.mjs')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: postgres.connectionString,
        SVC_CRM_WEBHOOK_SECRET: 'whsec_crm_3f9a1c7e5b2d4f6a8c0e2b4d6f8a1c3e',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    const { stdout, stderr: errors } = proc;
    let stderr = '';
    errors.on('data', (chunk: Buffer) => {
      if (stderr.length < 8_000) stderr += chunk.toString();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.once('exit', (code, signal) => resolve({ code, signal })),
    );
    await new Promise<void>((resolve, reject) => {
      stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('listening')) resolve();
      });
      void exited.then(() => reject(new Error(`the example exited before listening: ${stderr}`)));
    });
    proc.kill('SIGTERM');
    // Killed by the signal itself would be { signal: 'SIGTERM' }: the listener ran and the process ended.
    expect(await exited, stderr).toEqual({ code: 0, signal: null });
  }, 60_000);
});
