/**
 * @module
 * The one command: starts the receiver (receiver.ts) and one worker (worker.ts) as two processes,
 * passes their output through, and stops both on Ctrl-C / SIGTERM. Each process can also run alone
 * (`npx tsx receiver.ts`, `npx tsx worker.ts`): run as many workers as you like.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readEnv } from './receivers.js';

// Both processes need the same variables: checked here first, so a missing one is said once.
readEnv();

const here = fileURLToPath(new URL('.', import.meta.url));
const children: ChildProcess[] = ['receiver.ts', 'worker.ts'].map((file) =>
  spawn(process.execPath, ['--import', 'tsx', `${here}${file}`], { stdio: 'inherit', env: process.env }),
);
for (const child of children) {
  child.once('exit', (code) => {
    if (code !== 0 && code !== null) process.exitCode = code;
    for (const other of children) if (other.exitCode === null) other.kill('SIGTERM');
  });
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill('SIGTERM');
  });
}
