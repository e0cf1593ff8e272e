import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type AppOptions, createApp } from '../../../examples/express/server.js';
import { buildDist } from '../../package/dist.js';

/**
 * The bin as `npm run build` makes it: `cli.js` of the ESM build (tsup.config.ts), beside the
 * library's chunks it imports, built once per change of the sources by the build-output tests'
 * {@link buildDist}. That build sits inside the repository, so it resolves commander and zod from
 * node_modules as an installed package does.
 */
export async function buildCli(): Promise<string> {
  return join(await buildDist(), 'cli.js');
}

/**
 * The oldest supported Node the machine has: the `node` on PATH outside node_modules (Node 20 here),
 * so the tests prove the bin runs there; the test runner's own Node otherwise.
 */
export const supportedNode: string = (() => {
  const dirs = (process.env.PATH ?? '').split(':').filter((d) => d && !d.includes('node_modules'));
  for (const dir of dirs) {
    const candidate = join(dir, 'node');
    if (existsSync(candidate)) return candidate;
  }
  return process.execPath;
})();

/** The major version of {@link supportedNode}. */
export const supportedNodeMajor = Number(
  execFileSync(supportedNode, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim(),
);

/** What a finished run printed and its exit code. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment of every run: no colours, no inherited secrets. */
function cleanEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.SVC_MAIL_WEBHOOK_SECRET;
  delete env.SVC_CRM_WEBHOOK_SECRET;
  delete env.FORCE_COLOR;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** How long one {@link runCli} may take before it is killed (unless told otherwise). */
export const RUN_LIMIT_MS = 60_000;

/** Runs `node cli.js ...args` to its end. */
export function runCli(
  cli: string,
  args: readonly string[],
  options: { env?: Record<string, string | undefined>; input?: string | Uint8Array; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(supportedNode, [cli, ...args], { env: cleanEnv(options.env ?? {}), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? RUN_LIMIT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

/** A long-running `svc-webhooks emulate --json`: its first line (where it listens) and its output. */
export interface RunningEmulator {
  child: ChildProcess;
  url: string;
  port: number;
  /** Every JSON line printed after the first. */
  lines: Array<Record<string, unknown>>;
  /** Resolves with the first line matching `predicate` (already printed, or the next one). */
  waitFor(
    predicate: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  stop(): Promise<number | null>;
}

/** Starts the emulator on a free port and waits until it listens. */
export function startEmulator(cli: string, args: readonly string[] = []): Promise<RunningEmulator> {
  const child = spawn(supportedNode, [cli, 'emulate', '--port', '0', '--json', ...args], {
    env: cleanEnv({}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  return new Promise((resolve, reject) => {
    let first: Record<string, unknown> | undefined;
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    child.on('close', (code) => {
      if (!first) reject(new Error(`emulate exited ${code}: ${stderr}`));
    });
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let at = buffer.indexOf('\n');
      while (at >= 0) {
        const line = JSON.parse(buffer.slice(0, at)) as Record<string, unknown>;
        buffer = buffer.slice(at + 1);
        at = buffer.indexOf('\n');
        if (!first) {
          first = line;
          resolve({
            child,
            url: String(line.url).replace(/\/$/, ''),
            port: Number(line.port),
            lines,
            waitFor(predicate, timeoutMs = 20_000) {
              return new Promise((ok, fail) => {
                const check = () => {
                  const found = lines.find(predicate);
                  if (!found) return false;
                  waiters.delete(check);
                  clearTimeout(timer);
                  ok(found);
                  return true;
                };
                const timer = setTimeout(() => {
                  waiters.delete(check);
                  fail(
                    new Error(`no matching emulator line in ${timeoutMs} ms; got ${JSON.stringify(lines)}`),
                  );
                }, timeoutMs);
                if (!check()) waiters.add(check);
              });
            },
            async stop() {
              child.kill('SIGTERM');
              return exited;
            },
          });
        } else {
          lines.push(line);
          for (const waiter of [...waiters]) waiter();
        }
      }
    });
  });
}

/** A long-running command in text mode: the lines it printed so far, and a wait for the next ones. */
export interface RunningCli {
  child: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  stderr(): string;
  /** Resolves with the first stdout line matching `pattern` (already printed, or the next one). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** Starts `node cli.js ...args` and follows its stdout line by line (no colours, no inherited secrets). */
export function startCli(
  cli: string,
  args: readonly string[],
  options: { env?: Record<string, string | undefined> } = {},
): RunningCli {
  const child = spawn(supportedNode, [cli, ...args], {
    env: cleanEnv(options.env ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let at = buffer.indexOf('\n');
    while (at >= 0) {
      lines.push(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
      at = buffer.indexOf('\n');
    }
    for (const waiter of [...waiters]) waiter();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitForLine(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find((l) => pattern.test(l));
          if (found === undefined) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`no line matching ${pattern} in ${timeoutMs} ms; got:\n${lines.join('\n')}\n${stderr}`),
          );
        }, timeoutMs);
        if (!check()) waiters.add(check);
        void exited.then(() => {
          if (waiters.delete(check)) {
            clearTimeout(timer);
            reject(
              new Error(`exited before a line matching ${pattern}; got:\n${lines.join('\n')}\n${stderr}`),
            );
          }
        });
      });
    },
  };
}

/** The Express example app (examples/express) on a free port of 127.0.0.1, for the bin to send to. */
export async function startExampleApp(options: AppOptions): Promise<{ server: Server; url: string }> {
  const server = createServer(createApp({ logger: () => {}, ...options }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
