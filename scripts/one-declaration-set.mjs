#!/usr/bin/env node
// After tsup (`npm run build` runs both): one set of declarations in dist/, not two near copies.
//
// tsup writes each entry's declarations twice, `X.d.ts` for the `import` condition and `X.d.cts`
// for `require`, with chunks of their own: about 400 kB unpacked each, a sixth of the packed
// tarball. An ES module may import a CommonJS one, so the `import` declarations of an entry can be
// the one line `export * from './X.cjs'` (TypeScript reads `./X.d.cts` for it); the reverse, a
// `.d.cts` re-exporting a `.d.ts`, is an error under `moduleResolution: node16` (TS1479).
//
// Where the one line would change what an app sees, the entry's `.d.ts` is instead:
// - a copy of its `.d.cts` text, when the entry itself names a package whose types differ between
//   `import` and `require` (msw's `.d.mts` and `.d.ts`; an ES module app holds the `import` ones, and
//   a class with private members from the other set is not assignable to its own), or one whose two
//   modes cannot be compared (not installed here), or when it has a default export (`export *` does
//   not carry it). The copy's package imports resolve in the app's mode; its chunks are the shared
//   `.d.cts` ones;
// - left as tsup wrote it, with its `.d.ts` chunks, when such a package is named by a chunk.
// The `.d.ts` chunks that no entry left as written imports are deleted. `attw --pack`, publint and
// .ci/consumer/check-types.mjs (both resolutions, `skipLibCheck: false`) check the result.
//
//   node scripts/one-declaration-set.mjs [package directory]   (test/package/one-declaration-set.test.ts)
import { existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// The package's directory (its package.json and dist/): this repository, or one a test made.
const root = process.argv[2] ?? fileURLToPath(new URL('../', import.meta.url));
const dist = join(root, 'dist');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Each declaration file parsed once: a chunk is read by every entry that imports it. */
const parsed = new Map();
const sourceOf = (file) => {
  let source = parsed.get(file);
  if (!source) {
    source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
    parsed.set(file, source);
  }
  return source;
};

/** The module specifiers a declaration file imports or re-exports, JSDoc examples left out. */
function specifiers(file) {
  const source = sourceOf(file);
  const found = [];
  for (const statement of source.statements) {
    const spec = statement.moduleSpecifier;
    if (spec && ts.isStringLiteral(spec)) found.push(spec.text);
  }
  // `import('pkg').T` in a type position.
  const visit = (node) => {
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) found.push(literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const hasDefault = (file) =>
  sourceOf(file).statements.some(
    (s) =>
      ts.isExportAssignment(s) ||
      (ts.isExportDeclaration(s) &&
        s.exportClause &&
        ts.isNamedExports(s.exportClause) &&
        s.exportClause.elements.some((e) => e.name.text === 'default')) ||
      (ts.canHaveModifiers(s) &&
        (ts.getModifiers(s) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)),
  );

/** A declaration file and every relative file it imports, transitively. */
function closure(file) {
  const seen = new Set();
  const walk = (current) => {
    if (seen.has(current)) return;
    seen.add(current);
    for (const spec of specifiers(current)) {
      if (!spec.startsWith('.')) continue;
      const target = join(
        dirname(current),
        spec.replace(/\.c?js$/, (ext) => (ext === '.cjs' ? '.d.cts' : '.d.ts')),
      );
      if (!existsSync(target))
        throw new Error(
          `one-declaration-set: ${relative(root, current)} imports ${spec}, which is not in dist/`,
        );
      walk(target);
    }
  };
  walk(file);
  return seen;
}

const options = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
/** The types file TypeScript picks for `spec` from `file` in one resolution mode, or undefined. */
const typesOf = (spec, file, mode) =>
  ts.resolveModuleName(spec, file, options, ts.sys, undefined, undefined, mode).resolvedModule
    ?.resolvedFileName;
/** Whether a bare specifier resolves to the same types from `import` and from `require`. */
const sameTypes = (spec, file) => {
  // Node's built-ins are ambient modules of @types/node (`declare module 'node:http'`): one set.
  if (spec.startsWith('node:')) return true;
  const esm = typesOf(spec, file, ts.ModuleKind.ESNext);
  const cjs = typesOf(spec, file, ts.ModuleKind.CommonJS);
  // Not installed here (a peer left out of the devDependencies): not the same, rather than guess.
  return esm !== undefined && esm === cjs;
};

const kept = [];
const reexported = [];
const copied = [];
for (const branches of Object.values(pkg.exports)) {
  const esm = join(root, branches.import.types);
  const cjs = join(root, branches.require.types);
  if (!existsSync(esm) || !existsSync(cjs))
    throw new Error(`one-declaration-set: ${relative(root, esm)} or its .d.cts is missing: run tsup first`);
  const text = readFileSync(esm, 'utf8');
  const cjsText = readFileSync(cjs, 'utf8');
  const line = `export * from './${cjs.slice(dirname(cjs).length + 1).replace(/\.d\.cts$/, '.cjs')}';\n`;
  if (text === line) {
    reexported.push(esm);
    continue;
  }
  if (text === cjsText) {
    copied.push(esm);
    continue;
  }
  const files = closure(cjs);
  const differs = (file) => specifiers(file).some((spec) => !spec.startsWith('.') && !sameTypes(spec, file));
  if ([...files].some((file) => file !== cjs && differs(file))) {
    kept.push(esm);
    continue;
  }
  if (differs(cjs) || hasDefault(cjs)) {
    // The entry's own text as an ES declaration file: its package imports resolve as `import`
    // (msw's `.d.mts`), its chunks are the `.d.cts` ones, and a default export stays.
    writeFileSync(esm, cjsText);
    copied.push(esm);
    continue;
  }
  writeFileSync(esm, line);
  reexported.push(esm);
}

// The ES chunks still imported by a kept entry stay; the rest go.
const needed = new Set(kept.flatMap((file) => [...closure(file)]));
const entries = new Set([...kept, ...reexported, ...copied]);
const names = (files) => files.map((f) => relative(dist, f)).join(', ') || 'none';
let removed = 0;
for (const name of readdirSync(dist)) {
  const file = join(dist, name);
  if (!name.endsWith('.d.ts') || entries.has(file) || needed.has(file)) continue;
  unlinkSync(file);
  removed += 1;
}
console.log(
  `one-declaration-set: ${reexported.length} entries' import types re-export their .d.cts, ` +
    `${copied.length} are a copy of it (${names(copied)}), ${kept.length} keep their own (${names(kept)}); ` +
    `${removed} .d.ts chunks removed`,
);
