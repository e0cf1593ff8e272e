/**
 * Cloudflare Workers for the tests: an app directory where `@svc/webhooks` is the built package (as
 * npm installs it), a Worker bundled from it the way Wrangler bundles one (esbuild, ES module
 * output, the `workerd`/`worker`/`browser` conditions), and workerd started through miniflare on
 * 127.0.0.1 WITHOUT `nodejs_compat`: no `process`, no `node:` modules, no random values, timers or
 * I/O in global scope.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { root } from '../../package/dist.js';

/** A temporary directory holding `node_modules/@svc/webhooks` (package.json + `dist/`) and zod. */
export interface AppDir {
  dir: string;
  close(): void;
}

/**
 * Installs the built package from `distDir` (a `dist/` as `npm run build` or the tests' `buildDist()`
 * write it) into a new temporary directory, with the repository's package.json (its `exports`) and a
 * link to zod, the one dependency.
 */
export function createAppDir(distDir: string, prefix = 'svc-runtime-'): AppDir {
  if (!existsSync(join(distDir, 'fetch.js')))
    throw new Error(`${distDir} holds no build: run \`npm run build\` first.`);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const pkg = join(dir, 'node_modules', '@svc', 'webhooks');
  mkdirSync(pkg, { recursive: true });
  cpSync(join(root, 'package.json'), join(pkg, 'package.json'));
  cpSync(distDir, join(pkg, 'dist'), { recursive: true, filter: (source) => !source.endsWith('.json') });
  symlinkSync(join(root, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'), 'dir');
  return { dir, close: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Bundles `entry` (JavaScript or TypeScript) into one ES module as Wrangler does, resolving packages
 * from `appDir`'s node_modules (and `cloudflare:` and `node:` modules left to workerd).
 */
export async function bundleWorker(entry: string, appDir: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: appDir,
    nodePaths: [join(appDir, 'node_modules')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    external: ['cloudflare:*', 'node:*'],
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/** A running Worker. */
export interface RunningWorker {
  /** `http://127.0.0.1:<port>/` */
  url: URL;
  /** What workerd wrote to stdout and stderr (uncaught errors, console output). */
  output(): string;
  close(): Promise<void>;
}

/** The compatibility date of examples/cloudflare-worker/wrangler.toml, used everywhere. */
export function compatibilityDate(): string {
  const toml = readFileSync(join(root, 'examples/cloudflare-worker/wrangler.toml'), 'utf8');
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  if (!date) throw new Error('examples/cloudflare-worker/wrangler.toml has no compatibility_date');
  return date;
}

/**
 * Starts `script` (an ES module Worker) in workerd, with `bindings` as its `env` (text bindings, as
 * `wrangler secret put` makes them) and no compatibility flags unless `flags` (`nodejs_compat`).
 */
export async function startWorker(
  script: string,
  bindings: Record<string, string> = {},
  flags: string[] = [],
): Promise<RunningWorker> {
  let output = '';
  const collect = (stream: Readable) =>
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: compatibilityDate(),
    compatibilityFlags: flags,
    bindings,
    host: '127.0.0.1',
    port: 0,
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      collect(stdout);
      collect(stderr);
    },
  });
  try {
    const url = await mf.ready;
    return { url, output: () => output, close: () => mf.dispose() };
  } catch (error) {
    await mf.dispose().catch(() => undefined);
    throw new Error(`workerd did not start: ${String(error)}\n${output}`);
  }
}

/** The version of workerd miniflare runs. */
export function workerdVersion(): string {
  return (
    JSON.parse(readFileSync(join(root, 'node_modules/workerd/package.json'), 'utf8')) as { version: string }
  ).version;
}
