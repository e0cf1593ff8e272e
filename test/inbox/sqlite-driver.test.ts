/**
 * How the SQLite inbox (and the SQLite store, through the same loader) finds its driver, on the built
 * package in both formats: installed in a temp directory, run by a main script in another directory
 * that is also the working directory, with node:sqlite hidden. Without better-sqlite3 anywhere,
 * `createSqliteInbox` says so in its own name, with the install hint, when it is created. With
 * better-sqlite3 beside the package only, it is found from the package's location.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist } from '../package/dist.js';

const require = createRequire(import.meta.url);
/** A package's directory, from the test's own node_modules. */
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

// Hides node:sqlite (Node 22.13+), so the loader's only way is better-sqlite3.
const PRELOAD = `
const get = process.getBuiltinModule.bind(process);
process.getBuiltinModule = (id) => (id === 'node:sqlite' || id === 'sqlite' ? undefined : get(id));
`;

// What the main script reports: for the inbox and the store, where it failed (or that it worked).
const BODY = `
async function attempt(make, use) {
  let made;
  try {
    made = make();
  } catch (error) {
    return { at: 'create', code: error.code, message: error.message };
  }
  try {
    await use(made);
    return { ok: true };
  } catch (error) {
    return { at: 'use', code: error.code, message: error.message };
  } finally {
    try { await made.close(); } catch {}
  }
}
async function main({ createSqliteInbox, createSqliteStore }, dir) {
  const inbox = await attempt(
    () => createSqliteInbox({ path: dir + '/inbox.sqlite' }),
    async (made) => { await made.migrate(); await made.stats(); },
  );
  const store = await attempt(
    () => createSqliteStore({ path: dir + '/store.sqlite' }),
    async (made) => { await made.claim('k', { leaseMs: 1000 }); },
  );
  console.log(JSON.stringify({ inbox, store }));
}
`;
const MAIN = {
  ESM: ['main.mjs', `${BODY}\nawait main(await import(process.argv[2]), process.argv[3]);\n`],
  CJS: ['main.cjs', `${BODY}\nvoid main(require(process.argv[2]), process.argv[3]);\n`],
} as const;

// The machine's Node (20 in CI) is the one better-sqlite3's native build loads on (test/inbox/orm.test.ts).
const systemNode = (process.env.PATH ?? '')
  .split(':')
  .find((part) => part && !part.includes('node_modules') && existsSync(join(part, 'node')));

let work: string;
let dist: string;
beforeAll(async () => {
  dist = await buildDist();
  work = mkdtempSync(join(tmpdir(), 'inbox-sqlite-driver-'));
  writeFileSync(join(work, 'preload.mjs'), PRELOAD);
}, 200_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * The built package installed under `root/node_modules` with zod and, when asked, better-sqlite3
 * (linked from the test's own), and an app directory beside it holding no node_modules at all.
 */
function install(name: string, withBetterSqlite3: boolean): { app: string; entry: (ext: string) => string } {
  const root = join(work, name);
  const modules = join(root, 'node_modules');
  const pkg = join(modules, '@svc/webhooks');
  cpSync(dist, join(pkg, 'dist'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@svc/webhooks', type: 'module' }));
  symlinkSync(packageDir('zod'), join(modules, 'zod'));
  if (withBetterSqlite3) symlinkSync(packageDir('better-sqlite3'), join(modules, 'better-sqlite3'));
  const app = join(work, `${name}-app`);
  mkdirSync(app);
  for (const [file, source] of Object.values(MAIN)) writeFileSync(join(app, file), source);
  return { app, entry: (ext) => join(pkg, 'dist', `sqlite.${ext}`) };
}

interface Attempt {
  ok?: true;
  at?: 'create' | 'use';
  code?: string;
  message?: string;
}

/** Runs the app's main script of `format` on `node`, in the app's directory. */
function run(
  node: string,
  setup: ReturnType<typeof install>,
  format: keyof typeof MAIN,
): Promise<{ inbox: Attempt; store: Attempt }> {
  const [file] = MAIN[format];
  const entry = setup.entry(format === 'ESM' ? 'js' : 'cjs');
  const target = format === 'ESM' ? pathToFileURL(entry).href : entry;
  const preload = pathToFileURL(join(work, 'preload.mjs')).href;
  return new Promise((resolve, reject) => {
    execFile(
      node,
      ['--import', preload, join(setup.app, file), target, setup.app],
      { cwd: setup.app, encoding: 'utf8', timeout: 30_000 },
      (error, stdout, stderr) => {
        const last = stdout.trim().split('\n').pop() ?? '';
        if (error || !last.startsWith('{'))
          reject(new Error(`${node} ${format}: ${error}\n${stderr}${stdout}`));
        else resolve(JSON.parse(last));
      },
    );
  });
}

describe.each(['ESM', 'CJS'] as const)('the SQLite driver of the built package (%s)', (format) => {
  it('without one anywhere, createSqliteInbox is refused when created, in its own name, with the install hint', async () => {
    const setup = install(`missing-${format}`, false);
    const { inbox, store } = await run(process.execPath, setup, format);
    expect(inbox).toEqual({
      at: 'create',
      code: 'options_invalid',
      message:
        'createSqliteInbox: this runtime has no SQLite driver. Install better-sqlite3 (npm install better-sqlite3), run on Node 22.13+ or Bun.',
    });
    // The store, through the same loader, keeps its own name and its other way out.
    expect(store).toEqual({
      at: 'create',
      code: 'options_invalid',
      message:
        'createSqliteStore: this runtime has no SQLite driver. Install better-sqlite3 (npm install better-sqlite3), run on Node 22.13+ or Bun, or pass an open database as `database`.',
    });
  }, 60_000);

  it.runIf(systemNode)(
    'better-sqlite3 installed beside the package only (not where the main script or the working directory are) is found',
    async () => {
      const setup = install(`beside-${format}`, true);
      expect(existsSync(join(setup.app, 'node_modules'))).toBe(false);
      const { inbox, store } = await run(join(systemNode!, 'node'), setup, format);
      expect(inbox).toEqual({ ok: true });
      expect(store).toEqual({ ok: true });
    },
    60_000,
  );
});
