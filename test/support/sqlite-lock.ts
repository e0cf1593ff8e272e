/**
 * Another process holding a SQLite file's write lock (`BEGIN IMMEDIATE`), for tests and benches of
 * what waits for it: test/dedup/fixtures/sqlite-lock-holder.ts, started with Node and tsx.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HOLDER = fileURLToPath(new URL('../dedup/fixtures/sqlite-lock-holder.ts', import.meta.url));

/** Starts the holder; resolves once it holds the lock, with a promise of its exit (after `holdMs`). */
export async function holdSqliteLock(file: string, holdMs: number): Promise<{ released: Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, file, String(holdMs)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`holder exited ${code}`))));
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('locked')) resolve();
    });
    exited.catch(reject);
  });
  return { released: exited };
}
