import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));
export const NEXT_APP_DIR = join(root, 'examples/next');
const nextBin = createRequire(import.meta.url).resolve('next/dist/bin/next');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === '.next' || entry.name === 'node_modules' || entry.name === 'next-env.d.ts') continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds examples/next unless the last build is newer than its sources and the package's. */
export function buildNextApp(): { built: boolean; ms: number } {
  const buildId = join(NEXT_APP_DIR, '.next/BUILD_ID');
  let builtAt = 0;
  try {
    builtAt = statSync(buildId).mtimeMs;
  } catch {}
  if (builtAt > Math.max(newestMtime(NEXT_APP_DIR), newestMtime(join(root, 'src'))))
    return { built: false, ms: 0 };
  const started = performance.now();
  execFileSync(process.execPath, [nextBin, 'build', '--webpack'], {
    cwd: NEXT_APP_DIR,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
  return { built: true, ms: Math.round(performance.now() - started) };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `next start` on a free port, with a dedup file of its own (unless `env` names one); counts the JSON
 * event lines the example prints on stdout.
 */
export async function startNextApp(env: Record<string, string>) {
  const port = await freePort();
  const dedupDir = mkdtempSync(join(tmpdir(), 'svc-next-'));
  const dedupFile = join(dedupDir, 'webhook-dedup.sqlite');
  const child: ChildProcess = spawn(
    process.execPath,
    [nextBin, 'start', '-H', '127.0.0.1', '-p', String(port)],
    {
      cwd: NEXT_APP_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        SVC_DEDUP_FILE: dedupFile,
        ...env,
        NEXT_TELEMETRY_DISABLED: '1',
        NODE_ENV: 'production',
      },
    },
  );
  const lines: string[] = [];
  let rest = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    lines.push(...parts);
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`next start exited: ${stderr}`);
    try {
      await fetch(`${baseUrl}/webhooks/mail`, { method: 'GET' });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`next start did not answer: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const events = () =>
    lines.flatMap((line) => {
      try {
        const value = JSON.parse(line) as { deliveryId?: unknown };
        return typeof value === 'object' && value !== null && typeof value.deliveryId === 'string'
          ? [value]
          : [];
      } catch {
        return [];
      }
    });
  return {
    baseUrl,
    lines,
    stderr: () => stderr,
    handled: (deliveryId: string) => events().filter((e) => e.deliveryId === deliveryId).length,
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
      rmSync(dedupDir, { recursive: true, force: true });
    },
  };
}

/** Kept for debugging a failed build by hand. */
export function nextVersion(): string {
  return execFileSync(process.execPath, [nextBin, '--version'], { encoding: 'utf8' }).trim();
}
