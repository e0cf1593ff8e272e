import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';

/** Repository root. */
export const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A short digest of every file under src/ plus `files` (repository-relative) and `extra`: a build is
 * reused while none of it changes.
 */
export function sourcesHash(files: readonly string[], extra = ''): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else hash.update(relative(root, path)).update(readFileSync(path));
    }
  };
  walk(join(root, 'src'));
  for (const file of files) hash.update(file).update(readFileSync(join(root, file)));
  hash.update(extra);
  return hash.digest('hex').slice(0, 16);
}

// Everything the build output depends on.
const inputsHash = () =>
  sourcesHash(
    ['tsup.config.ts', 'entries.json', 'package.json', 'tsconfig.json'],
    process.env.SVC_WEBHOOKS_TSUP_CONFIG ?? '',
  );

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Builds the package with the committed tsup.config.ts (JavaScript and esbuild metafiles, no
 * declarations: publint and attw check those in .ci/run) into a temporary directory, once per
 * change of the sources: test files in parallel workers share one build through a lock directory.
 * Returns the output directory (the equivalent of `dist/`).
 *
 * `SVC_WEBHOOKS_TSUP_CONFIG=path/to/config.ts` builds with another config (for example a subset of
 * the entries while some are still being written); the committed config fails on a missing entry.
 */
export async function buildDist(): Promise<string> {
  const outDir = join(root, 'node_modules', '.cache', `svc-webhooks-dist-${inputsHash()}`);
  const done = join(outDir, '.complete');
  const lock = `${outDir}.lock`;
  const deadline = Date.now() + 180_000;
  mkdirSync(join(outDir, '..'), { recursive: true });
  while (!existsSync(done)) {
    try {
      mkdirSync(lock);
    } catch {
      // Another worker builds; take over a lock left by a crashed run.
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`Timed out waiting for the build in ${outDir}`);
      await sleep(200);
      continue;
    }
    try {
      if (existsSync(done)) break;
      const configPath = process.env.SVC_WEBHOOKS_TSUP_CONFIG ?? join(root, 'tsup.config.ts');
      const config = (await import(/* @vite-ignore */ configPath)).default as Options;
      const { build } = await import('tsup');
      const entry = Object.fromEntries(
        Object.entries(config.entry as Record<string, string>).map(([name, file]) => [
          name,
          join(root, file),
        ]),
      );
      await build({
        ...config,
        entry,
        outDir,
        dts: false,
        metafile: true,
        clean: true,
        silent: true,
        config: false,
        tsconfig: join(root, 'tsconfig.json'),
      });
      writeFileSync(done, new Date().toISOString());
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return outDir;
}
