/**
 * Worker processes for the engines' fault suites: each prints `ready`, then `start <id>` and
 * `done <id>` for every handler run; the harness counts starts and completions per delivery id across
 * every process it spawned, and tracks what each one is running (to kill a busy one).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** One worker process and the delivery ids its handlers are running. */
export interface WorkerProcess {
  child: ChildProcess;
  running: Set<string>;
  exited: Promise<unknown>;
}

/** Spawns worker processes of `script` (run with tsx from the repository root) and counts their runs. */
export function workerProcesses(script: string) {
  const starts = new Map<string, number>();
  const dones = new Map<string, number>();
  const workers: WorkerProcess[] = [];

  /** Starts one worker with `env` added to this process's; resolves once it printed `ready`. */
  async function spawnWorker(env: Record<string, string>): Promise<WorkerProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const running = new Set<string>();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      if (errors.length < 8_000) errors += chunk.toString();
    });
    await new Promise<void>((resolve, reject) => {
      let buffered = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          const [word, id = ''] = line.split(' ');
          if (word === 'ready') resolve();
          else if (word === 'start') {
            starts.set(id, (starts.get(id) ?? 0) + 1);
            running.add(id);
          } else if (word === 'done') {
            dones.set(id, (dones.get(id) ?? 0) + 1);
            running.delete(id);
          }
        }
      });
      void exited.then(() => reject(new Error(`worker exited: ${errors}`)));
    });
    const worker = { child, running, exited };
    workers.push(worker);
    return worker;
  }

  return { starts, dones, workers, spawnWorker };
}
