/**
 * The receiving process of test/inbox/fixtures/receiving-process.ts as a child process, for the tests
 * that SIGKILL it: bundled once (esbuild, as tsx would compile it) so each restart after a SIGKILL
 * takes a fraction of a second rather than a TypeScript compile.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PROCESS = fileURLToPath(new URL('./fixtures/receiving-process.ts', import.meta.url));

export interface Receiving {
  child: ChildProcess;
  exited: Promise<NodeJS.Signals | null>;
  stderr(): string;
}

// One bundle per test process: files that run at once in other workers never write it together.
const BUNDLE = join(ROOT, `node_modules/.cache/inbox-test/receiving-process-${process.pid}.mjs`);
let bundled: Promise<unknown> | undefined;

/** Starts the receiving process with `env`; resolves once it listens. */
export async function spawnReceiving(env: Record<string, string>): Promise<Receiving> {
  bundled ??= build({
    entryPoints: [PROCESS],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: BUNDLE,
    tsconfig: join(ROOT, 'tsconfig.json'),
    external: ['pg', 'better-sqlite3', 'drizzle-orm', 'kysely'],
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    logLevel: 'silent',
  });
  await bundled;
  const child = spawn(process.execPath, [BUNDLE], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (errors.length < 8_000) errors += chunk.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    void exited.then(() => reject(new Error(`receiving process exited: ${errors}`)));
    setTimeout(() => reject(new Error(`receiving process not ready in 30 s: ${errors}`)), 30_000).unref();
  });
  return { child, exited, stderr: () => errors };
}
