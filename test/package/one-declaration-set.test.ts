/**
 * scripts/one-declaration-set.mjs (run by `npm run build` after tsup) on a package made here: which
 * entries' `import` declarations become a re-export of their `.d.cts`, which a copy of it, which keep
 * their own, and which `.d.ts` chunks go. The fixture sits under node_modules/.cache so that `msw`
 * (two sets of declarations) and `zod` (one) resolve as they do for the real build. The consumer
 * checks of .ci/run compile the real package this way (.ci/consumer/types/peers.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { root } from './dist.js';

const script = join(root, 'scripts/one-declaration-set.mjs');
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A package directory with `entries` (name -> [.d.cts text, .d.ts text]) and `chunks` (file -> text). */
function fixture(entries: Record<string, [string, string]>, chunks: Record<string, string>): string {
  const cache = join(root, 'node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'one-declaration-set-'));
  made.push(dir);
  mkdirSync(join(dir, 'dist'));
  const exports = Object.fromEntries(
    Object.keys(entries).map((name) => [
      name === 'index' ? '.' : `./${name}`,
      { import: { types: `./dist/${name}.d.ts` }, require: { types: `./dist/${name}.d.cts` } },
    ]),
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fixture', type: 'module', exports }));
  for (const [name, [cts, ts]] of Object.entries(entries)) {
    writeFileSync(join(dir, 'dist', `${name}.d.cts`), cts);
    writeFileSync(join(dir, 'dist', `${name}.d.ts`), ts);
  }
  for (const [file, text] of Object.entries(chunks)) writeFileSync(join(dir, 'dist', file), text);
  return dir;
}

const run = (dir: string) => execFileSync(process.execPath, [script, dir], { encoding: 'utf8' });
const read = (dir: string, file: string) => readFileSync(join(dir, 'dist', file), 'utf8');

describe('one set of declarations', () => {
  it('re-exports, copies or keeps each entry by what its declarations import', () => {
    const dir = fixture(
      {
        // zod (one set of types) and a Node built-in: the `.d.cts` serves both modes.
        index: [
          "import { A } from './chunk-c.cjs';\nimport * as z from 'zod';\nimport { IncomingMessage } from 'node:http';\nexport declare const schema: z.ZodString;\nexport declare function read(req: IncomingMessage): A;\nexport type { A };\n",
          "import { A } from './chunk-e.js';\nimport * as z from 'zod';\nimport { IncomingMessage } from 'node:http';\nexport declare const schema: z.ZodString;\nexport declare function read(req: IncomingMessage): A;\nexport type { A };\n",
        ],
        // msw (`.d.mts` for import, `.d.ts` for require) named by the entry itself: a copy.
        msw: [
          "import { HttpHandler } from 'msw';\nimport { A } from './chunk-c.cjs';\nexport declare function handlers(a: A): HttpHandler[];\n",
          "import { HttpHandler } from 'msw';\nimport { A } from './chunk-e.js';\nexport declare function handlers(a: A): HttpHandler[];\n",
        ],
        // A default export, which `export *` would not carry: a copy.
        // (Each `.d.ts` differs from its `.d.cts`, as tsup's do: a `.d.ts` already equal to its `.d.cts`
        // reads as a copy made by an earlier run.)
        def: [
          'declare const value: number;\nexport default value;\n',
          '/** ES */\ndeclare const value: number;\nexport default value;\n',
        ],
        // msw named by a chunk: the chunk would resolve it as `require`, so the entry keeps its own set.
        chunked: ["export { handler } from './chunk-p.cjs';\n", "export { handler } from './chunk-q.js';\n"],
        // A package not installed here: its two modes cannot be compared, so a copy.
        absent: [
          "import { Thing } from 'no-such-package-here';\nexport declare const thing: Thing;\n",
          "/** ES */\nimport { Thing } from 'no-such-package-here';\nexport declare const thing: Thing;\n",
        ],
      },
      {
        'chunk-c.d.cts': 'interface A {\n    a: 1;\n}\nexport type { A };\n',
        'chunk-e.d.ts': 'interface A {\n    a: 1;\n}\nexport type { A };\n',
        'chunk-p.d.cts': "import { HttpHandler } from 'msw';\nexport declare const handler: HttpHandler;\n",
        'chunk-q.d.ts': "import { HttpHandler } from 'msw';\nexport declare const handler: HttpHandler;\n",
      },
    );
    const before = Object.fromEntries(
      ['msw', 'def', 'chunked', 'absent'].map((name) => [name, read(dir, `${name}.d.cts`)]),
    );
    const chunkedEsm = read(dir, 'chunked.d.ts');

    expect(run(dir)).toContain('1 .d.ts chunks removed');
    expect(read(dir, 'index.d.ts')).toBe("export * from './index.cjs';\n");
    expect(existsSync(join(dir, 'dist/chunk-e.d.ts'))).toBe(false);
    expect(read(dir, 'msw.d.ts')).toBe(before.msw);
    expect(read(dir, 'def.d.ts')).toBe(before.def);
    expect(read(dir, 'absent.d.ts')).toBe(before.absent);
    expect(read(dir, 'chunked.d.ts')).toBe(chunkedEsm);
    expect(existsSync(join(dir, 'dist/chunk-q.d.ts'))).toBe(true);
    // The `.d.cts` files are never touched.
    expect(read(dir, 'chunk-c.d.cts')).toContain('interface A');

    // A second run (a build that ran the script twice) changes nothing.
    const second = run(dir);
    expect(second).toContain('0 .d.ts chunks removed');
    expect(second).toContain("1 entries' import types re-export");
    expect(read(dir, 'index.d.ts')).toBe("export * from './index.cjs';\n");
    expect(read(dir, 'chunked.d.ts')).toBe(chunkedEsm);
  });

  it('stops, naming the file, when a declaration imports a chunk that is not there', () => {
    const dir = fixture(
      { index: ["export { A } from './gone.cjs';\n", "export { A } from './gone.js';\n"] },
      {},
    );
    expect(() => execFileSync(process.execPath, [script, dir], { encoding: 'utf8', stdio: 'pipe' })).toThrow(
      /imports \.\/gone\.cjs, which is not in dist/,
    );
    expect(read(dir, 'index.d.ts')).toBe("export { A } from './gone.js';\n");
  });
});
