import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDist } from '../package/dist.js';

// `@svc/webhooks/testing` must never reach a production entry: no module reachable from another
// entry of entries.json may import src/testing (STYLE.md "./testing never reaches production bundles").
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const entries: Record<string, string> = JSON.parse(readFileSync(join(root, 'entries.json'), 'utf8'));
/** `testing` and its own subpaths (`testing/msw`): the test-only entries. */
const isTestingSubpath = (subpath: string) => subpath === 'testing' || subpath.startsWith('testing/');
const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts'), base]) {
    if (existsSync(candidate) && candidate.endsWith('.ts')) return candidate;
  }
  return null;
}

function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const next = resolveImport(file, (match[1] ?? match[2])!);
      if (next) queue.push(next);
    }
  }
  return seen;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

describe('the testing boundary', () => {
  const testingDir = join(root, 'src/testing');

  it.each(Object.entries(entries).filter(([subpath]) => !isTestingSubpath(subpath)))(
    'entry %s does not reach src/testing',
    (_subpath, file) => {
      const files = [...reachable(join(root, file))].map((f) => relative(root, f));
      expect(files.length).toBeGreaterThan(0);
      expect(files.filter((f) => f.startsWith('src/testing/'))).toEqual([]);
    },
  );

  // src/cli is the `svc-webhooks` command: the package's `bin`, an entry of the ESM build only
  // (tsup.config.ts), not of entries.json, whose emulator and `send` are built on the emitters.
  const cliDir = join(root, 'src/cli');

  it('no module outside src/testing (and the command in src/cli) imports it', () => {
    const offenders = sourceFiles(join(root, 'src'))
      .filter((f) => !f.startsWith(testingDir) && !f.startsWith(cliDir))
      .filter((f) =>
        [...readFileSync(f, 'utf8').matchAll(IMPORT)].some((m) => {
          const target = resolveImport(f, (m[1] ?? m[2])!);
          return target?.startsWith(testingDir) ?? false;
        }),
      );
    expect(offenders).toEqual([]);
  });

  it.each(Object.entries(entries))('entry %s does not reach the command in src/cli', (_subpath, file) => {
    const files = [...reachable(join(root, file))].map((f) => relative(root, f));
    expect(files.filter((f) => f.startsWith('src/cli/'))).toEqual([]);
  });

  it('the testing entry itself does reach the emitter (the check can see imports)', () => {
    const files = [...reachable(join(root, entries.testing!))].map((f) => relative(root, f));
    expect(files).toContain('src/testing/emitter/engine.ts');
  });
});

// Over the build output (the committed tsup config, built once per source change by the package
// tests' shared build): no production entry file, nor any chunk it loads, contains the emitter.
describe('the testing boundary in the build output', () => {
  let dist: string;
  beforeAll(async () => {
    dist = await buildDist();
  });
  const CHUNK = /(?:from|import|require\()\s*\(?\s*['"](\.\/[^'"]+)['"]/g;
  function loaded(file: string, seen = new Set<string>()): Set<string> {
    if (seen.has(file) || !existsSync(file)) return seen;
    seen.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(CHUNK)) loaded(join(dist, match[1]!), seen);
    return seen;
  }
  const productionFiles = Object.keys(entries)
    .filter((subpath) => !isTestingSubpath(subpath))
    .flatMap((subpath) => ['js', 'cjs'].map((ext) => `${subpath === '.' ? 'index' : subpath}.${ext}`));

  it.each(productionFiles)('%s does not contain the emitter', (file) => {
    expect(existsSync(join(dist, file)), `${file} was built`).toBe(true);
    const files = [...loaded(join(dist, file))];
    expect(files.length).toBeGreaterThan(0);
    for (const f of files)
      expect(readFileSync(f, 'utf8')).not.toMatch(/createMailEmitter|createVirtualClock/);
  });

  it('testing.js does', () => {
    expect(readFileSync(join(dist, 'testing.js'), 'utf8')).toMatch(/createMailEmitter/);
  });
});
