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
  /** Ids whose handler ran to its end here (`done`). */
  finished: Set<string>;
  /** Ids whose run here ended with a `handled` verdict (`handled`, printed by a fixture that reports it). */
  handled: Set<string>;
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
    const finished = new Set<string>();
    const handled = new Set<string>();
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
            finished.add(id);
          } else if (word === 'handled') handled.add(id);
        }
      });
      void exited.then(() => reject(new Error(`worker exited: ${errors}`)));
    });
    const worker = { child, running, finished, handled, exited };
    workers.push(worker);
    return worker;
  }

  /**
   * Whether delivery `id`'s second run is the at-least-once window of docs/handoff.md ("Guarantees"):
   * one of its runs ended its handler in a worker that was then killed (`killed`) before that run's
   * verdict, so its claim's completion may never have been recorded. Any other second run is a
   * delivery run twice.
   */
  function rerunAfterKill(id: string, killed: readonly WorkerProcess[]): boolean {
    return killed.some((worker) => worker.finished.has(id) && !worker.handled.has(id));
  }

  return { starts, dones, workers, spawnWorker, rerunAfterKill };
}
