import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from './dist.js';

type Branch = { types: string; default: string };
type Pkg = {
  name: string;
  license: string;
  type: string;
  sideEffects: boolean;
  engines: { node: string };
  main: string;
  module: string;
  types: string;
  files: string[];
  bin: Record<string, string>;
  exports: Record<string, { import: Branch; require: Branch }>;
  typesVersions: Record<string, Record<string, string[]>>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  scripts: Record<string, string>;
};

const read = (file: string) => readFileSync(join(root, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as Pkg;
const subpaths: Record<string, string> = JSON.parse(read('entries.json'));
const tsconfig = JSON.parse(read('tsconfig.json')) as {
  compilerOptions: { paths: Record<string, string[]> };
};

const exportKey = (subpath: string) => (subpath === '.' ? '.' : `./${subpath}`);
// dist is flat: `testing/msw` builds to dist/testing-msw.* (tsup.config.ts).
const fileName = (subpath: string) => (subpath === '.' ? 'index' : subpath.replaceAll('/', '-'));

// package.json#exports and #typesVersions are written from entries.json by scripts/sync-exports.mjs.
const SYNC = 'run `node scripts/sync-exports.mjs` after changing entries.json';

describe('package.json', () => {
  it('exports exactly the subpaths of entries.json, in the same order', () => {
    expect(Object.keys(pkg.exports), SYNC).toEqual(Object.keys(subpaths).map(exportKey));
  });

  // TypeScript's `moduleResolution: node` (node10) ignores `exports`: `attw --pack` with its default
  // profile checks that every subpath still finds its types there.
  it('maps every subpath but the root to its CJS types in typesVersions, for node10 resolution', () => {
    const expected = Object.fromEntries(
      Object.keys(subpaths)
        .filter((subpath) => subpath !== '.')
        .map((subpath) => [subpath, [`./dist/${fileName(subpath)}.d.cts`]]),
    );
    expect(pkg.typesVersions, SYNC).toEqual({ '*': expected });
  });

  it.each(Object.keys(subpaths))(
    'subpath "%s" has import and require branches, each with its own types first',
    (subpath) => {
      const name = fileName(subpath);
      const entry = pkg.exports[exportKey(subpath)]!;
      expect(entry, SYNC).toEqual({
        import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
        require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
      });
      // TypeScript takes the first matching condition: `types` must come before `default`.
      expect(Object.keys(entry)).toEqual(['import', 'require']);
      expect(Object.keys(entry.import)).toEqual(['types', 'default']);
      expect(Object.keys(entry.require)).toEqual(['types', 'default']);
    },
  );

  it('has main/module/types fallbacks for the root entry, for tools that ignore exports', () => {
    expect(pkg.main).toBe('./dist/index.cjs');
    expect(pkg.module).toBe('./dist/index.js');
    expect(pkg.types).toBe('./dist/index.d.cts');
  });

  it('is an MIT, side-effect-free ES module package for Node >= 20', () => {
    expect(pkg.name).toBe('@svc/webhooks');
    expect(pkg.license).toBe('MIT');
    expect(read('LICENSE')).toMatch(/^MIT License/);
    expect(pkg.type).toBe('module');
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.engines.node).toBe('>=20');
    expect(pkg.files).toContain('dist');
  });

  it('packs a complete package from a fresh clone: prepack builds dist/, every other file exists', () => {
    expect(pkg.scripts.prepack).toBe('npm run build');
    for (const file of pkg.files.filter((file) => file !== 'dist')) {
      expect(existsSync(join(root, file)), `files lists ${file}`).toBe(true);
    }
  });

  it('depends on zod 4, and commander 14 for the svc-webhooks command only', () => {
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['commander', 'zod']);
    expect(pkg.dependencies.zod).toMatch(/^\^4\./);
    // commander 15 needs Node 22; the package supports Node 20 (docs/cli.md "Why commander").
    expect(pkg.dependencies.commander).toMatch(/^\^14\./);
  });

  it('ships the svc-webhooks command as its bin, built with the library', () => {
    expect(pkg.bin).toEqual({ 'svc-webhooks': './dist/cli.js' });
  });

  it('frameworks and clients are optional peers, tested in development', () => {
    const peers = Object.keys(pkg.peerDependencies);
    expect(peers.length).toBeGreaterThan(0);
    for (const peer of peers) {
      expect(pkg.peerDependenciesMeta[peer], peer).toEqual({ optional: true });
      expect(pkg.dependencies[peer], peer).toBeUndefined();
      expect(pkg.devDependencies[peer], `${peer} is installed for the tests`).toBeDefined();
    }
    expect(Object.keys(pkg.peerDependenciesMeta).sort()).toEqual([...peers].sort());
  });

  it('has the scripts the README and CI use', () => {
    expect(pkg.scripts).toMatchObject({
      // tsup, then one set of declarations for both formats (scripts/one-declaration-set.mjs).
      build: 'tsup && node scripts/one-declaration-set.mjs',
      test: 'vitest run',
      typecheck: expect.stringMatching(/^tsc\b/),
      lint: 'biome check .',
    });
  });
});

describe('tsconfig.json', () => {
  it('maps every public name to its source, like the vitest aliases', () => {
    const expected = Object.fromEntries(
      Object.entries(subpaths).map(([subpath, file]) => [
        subpath === '.' ? '@svc/webhooks' : `@svc/webhooks/${subpath}`,
        [`./${file}`],
      ]),
    );
    expect(tsconfig.compilerOptions.paths).toEqual(expected);
  });
});
