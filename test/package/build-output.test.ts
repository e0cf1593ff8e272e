import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDist, root } from './dist.js';
import { bundledSources, reachable } from './graph.js';

const subpaths: Record<string, string> = JSON.parse(readFileSync(join(root, 'entries.json'), 'utf8'));
// dist is flat: `testing/msw` builds to testing-msw.* (tsup.config.ts).
const names = Object.keys(subpaths).map((subpath) =>
  subpath === '.' ? 'index' : subpath.replaceAll('/', '-'),
);
/** The test-only entries: `testing` and its `testing/…` subpaths. */
const isTesting = (name: string) => name === 'testing' || name.startsWith('testing-');
const formats = [
  ['ESM', 'js'],
  ['CJS', 'cjs'],
] as const;

// esbuild emits `var WebhookError = class extends Error` in both formats (no CJS wrapper:
// test/package/error-name.test.ts), exactly where the class is defined.
const DEFINES_WEBHOOK_ERROR = /\bWebhookError = class\b|class WebhookError\b/;

let dist: string;
beforeAll(async () => {
  dist = await buildDist();
});

describe('build output', () => {
  it.each(formats)('has an %s file for every subpath', (_format, ext) => {
    const files = readdirSync(dist);
    for (const name of names) expect(files).toContain(`${name}.${ext}`);
  });

  describe.each(formats)('%s', (_format, ext) => {
    it('./verify imports nothing outside itself and the shared errors: no zod, no node:crypto, no framework', () => {
      const { files, external } = reachable(dist, [`verify.${ext}`]);
      expect([...external]).toEqual([]);
      const sources = bundledSources(dist);
      for (const file of files) {
        for (const source of sources.get(file) ?? [])
          expect(source).toMatch(/^src\/(verify\/|shared\/errors\.ts$)/);
      }
      for (const file of files) expect(readFileSync(join(dist, file), 'utf8')).not.toMatch(/\bzod\b/);
    });

    // STYLE: "./testing never reaches production bundles", checked over the module graph of the output.
    it('no production entry reaches ./testing code', () => {
      const testingDir = `${dirname(subpaths.testing!)}/`;
      const production = names.filter((name) => !isTesting(name)).map((name) => `${name}.${ext}`);
      const sources = bundledSources(dist);
      const fromTesting = (file: string) =>
        (sources.get(file) ?? []).filter(
          (source) => source.startsWith(testingDir) || source === subpaths.testing,
        );
      // The check can fail: the testing entry itself bundles testing sources.
      const testing = reachable(dist, [`testing.${ext}`]);
      expect([...testing.files].flatMap(fromTesting).length).toBeGreaterThan(0);

      const { files, external } = reachable(dist, production);
      expect(files.has(`testing.${ext}`)).toBe(false);
      for (const file of files) expect(fromTesting(file), `${file} bundles ./testing sources`).toEqual([]);
      expect(external.has('msw')).toBe(false);
    });

    // An app that installs the package (and so zod) must be able to load every entry that
    // .ci/consumer/peer-entries.json does not list; the listed ones load only their own peers
    // (./testing once imported msw at the top, for its msw handlers only).
    it('every entry loads only zod, node: modules and the optional peers it is listed with', () => {
      const peerEntries: Record<string, string[]> = JSON.parse(
        readFileSync(join(root, '.ci/consumer/peer-entries.json'), 'utf8'),
      );
      const packageName = (id: string) =>
        id
          .split('/')
          .slice(0, id.startsWith('@') ? 2 : 1)
          .join('/');
      for (const [subpath, name] of Object.keys(subpaths).map((s, i) => [s, names[i]!] as const)) {
        const { external } = reachable(dist, [`${name}.${ext}`]);
        const used = [...new Set([...external].filter((id) => !id.startsWith('node:')).map(packageName))];
        const allowed = ['zod', ...(peerEntries[subpath] ?? [])];
        expect(
          used.filter((id) => !allowed.includes(id)),
          `${name}.${ext} loads a package it is not listed with`,
        ).toEqual([]);
      }
      // The check can fail: the msw entry does load msw.
      expect([...reachable(dist, [`testing-msw.${ext}`]).external]).toContain('msw');
    });

    it('defines WebhookError exactly once (a shared chunk)', () => {
      const defining = readdirSync(dist).filter(
        (file) =>
          file.endsWith(`.${ext}`) && DEFINES_WEBHOOK_ERROR.test(readFileSync(join(dist, file), 'utf8')),
      );
      expect(defining).toHaveLength(1);
      expect(defining[0]).toMatch(/^chunk-/);
    });
  });

  it('every entry hands out the same WebhookError class (ESM)', async () => {
    const classes = new Set<unknown>();
    for (const name of ['index', 'verify']) {
      classes.add(
        (await import(/* @vite-ignore */ pathToFileURL(join(dist, `${name}.js`)).href)).WebhookError,
      );
    }
    expect(classes.size).toBe(1);
    expect([...classes][0]).toBeTypeOf('function');
  });

  it('every entry hands out the same WebhookError class (CJS)', () => {
    const require = createRequire(join(dist, 'index.cjs'));
    const classes = new Set(['index', 'verify'].map((name) => require(`./${name}.cjs`).WebhookError));
    expect(classes.size).toBe(1);
    expect([...classes][0]).toBeTypeOf('function');
  });
});
