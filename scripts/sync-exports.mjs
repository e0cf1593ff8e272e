#!/usr/bin/env node
// Writes package.json#exports and #typesVersions from entries.json, the one list of subpaths (the
// build, the vitest aliases and the tsconfig paths read it too). Run after changing entries.json:
//   node scripts/sync-exports.mjs
// test/package/exports.test.ts fails while package.json and entries.json disagree.
//
// exports: an `import` and a `require` branch per subpath, each with its own types first.
// typesVersions: TypeScript's `moduleResolution: node` (node10) ignores `exports`; this map is how
// it finds a subpath's types (its CJS ones, as the root's `types` field does). dist is flat:
// `testing/msw` builds to dist/testing-msw.* (tsup.config.ts).
import { readFileSync, writeFileSync } from 'node:fs';

const read = (file) => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'));
const subpaths = Object.keys(read('entries.json'));
const pkg = read('package.json');

const fileName = (subpath) => (subpath === '.' ? 'index' : subpath.replaceAll('/', '-'));
const exports = Object.fromEntries(
  subpaths.map((subpath) => {
    const name = fileName(subpath);
    return [
      subpath === '.' ? '.' : `./${subpath}`,
      {
        import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
        require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
      },
    ];
  }),
);
const typesVersions = {
  '*': Object.fromEntries(
    subpaths
      .filter((subpath) => subpath !== '.')
      .map((subpath) => [subpath, [`./dist/${fileName(subpath)}.d.cts`]]),
  ),
};

// Same key order as before, typesVersions right after exports.
const { typesVersions: _previous, ...rest } = pkg;
const next = {};
for (const [key, value] of Object.entries(rest)) {
  next[key] = key === 'exports' ? exports : value;
  if (key === 'exports') next.typesVersions = typesVersions;
}
const text = `${JSON.stringify(next, null, 2)}\n`;
const changed = text !== readFileSync(new URL('../package.json', import.meta.url), 'utf8');
if (changed) writeFileSync(new URL('../package.json', import.meta.url), text);
console.log(`package.json: ${subpaths.length} subpaths${changed ? ', updated' : ', already in sync'}`);
