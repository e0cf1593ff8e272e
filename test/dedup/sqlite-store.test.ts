/**
 * The SQLite store: the whole store contract on the runtime's driver in this process and, in child
 * processes, on the drivers of the other runtimes here (better-sqlite3 on Node 20, node:sqlite on Node
 * 24, bun:sqlite on Bun), with a path and with an open handle; processes of several runtimes claiming
 * the same keys of one file at once; durability across reopening; a full disk; the sweep.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCrmReceiver } from '@svc/webhooks';
import { createSqliteStore } from '@svc/webhooks/sqlite';
import { storeContract } from '@svc/webhooks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver } from '../receivers/support.js';
import { createManualClock } from '../support/clock.js';
import { openRawSqlite, rawSqliteDriver } from '../support/sqlite.js';
import { forEachStore } from '../support/stores.js';
import { expectBadRowsReplaced } from './bad-rows.js';
import { storeContract as contractTests } from './contract.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

forEachStore(contractTests, ['sqlite']);

let dir: string;
let files = 0;
const file = () => join(dir, `${++files}.sqlite`);
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe(`sqlite with an open ${rawSqliteDriver()} database`, () => {
  for (const check of storeContract({
    create: ({ clock }) => createSqliteStore({ database: openRawSqlite(file()), clock }),
  })) {
    it(check.name, check.run);
  }
});

/** A runtime of this machine that can run a fixture: Node through tsx, or Bun. */
interface Runtime {
  name: string;
  command: string;
  args: string[];
}

function nodeOnPath(): string | undefined {
  // The first `node` outside node_modules/.bin: the machine's own (npm puts the `node` package first).
  for (const part of (process.env.PATH ?? '').split(':')) {
    if (part && !part.includes('node_modules') && existsSync(join(part, 'node'))) return join(part, 'node');
  }
  return undefined;
}

const same = (a: string, b: string) => realpathSync(a) === realpathSync(b);
const packageNode = join(ROOT, 'node_modules/.bin/node');
const bun = join(ROOT, 'node_modules/.bin/bun');
const nodes = [nodeOnPath(), existsSync(packageNode) ? packageNode : undefined]
  .filter((path): path is string => path !== undefined)
  .filter((path, i, all) => all.findIndex((other) => same(other, path)) === i);
const runtimes: Runtime[] = [
  ...nodes.map((path) => ({ name: `node at ${path}`, command: path, args: ['--import', 'tsx'] })),
  ...(existsSync(bun) ? [{ name: 'bun', command: bun, args: [] }] : []),
];
const others = runtimes.filter((r) => r.name === 'bun' || !same(r.command, process.execPath));

/** Runs a fixture in `runtime` to the end; resolves with its last stdout line, parsed. */
function runFixture(runtime: Runtime, script: string, args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(runtime.command, [...runtime.args, fixture(script), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{'))
        reject(new Error(`${runtime.name} exited ${code}: ${err}${out}`));
      else resolve(JSON.parse(last) as Record<string, unknown>);
    });
  });
}

// The checks the fixture must report, in order: the whole contract, with the stall and unreachable checks.
const CHECK_NAMES = storeContract({
  create: () => createSqliteStore({ path: ':memory:' }),
  stall: async () => () => {},
  unreachable: () => createSqliteStore({ path: ':memory:' }),
}).map((check) => check.name);

/** The driver the store opens a path with in `runtime` (reported by the fixture as `runtime`). */
function expectedDriver(reported: string): string {
  if (reported.startsWith('bun')) return 'bun:sqlite';
  const [major = 0, minor = 0] = reported.replace('node v', '').split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 13) ? 'node:sqlite' : 'better-sqlite3';
}

describe.each(others.map((runtime) => [runtime.name, runtime] as const))(
  'the store contract in another runtime (%s)',
  (_name, runtime) => {
    for (const mode of ['path', 'handle']) {
      it(`passes every check, the store given a ${mode}`, async () => {
        const report = (await runFixture(runtime, 'sqlite-contract.ts', [mode])) as {
          runtime: string;
          driver: string;
          results: { name: string; error?: string }[];
        };
        expect(report.results.filter((r) => r.error)).toEqual([]);
        expect(report.results.map((r) => r.name)).toEqual(CHECK_NAMES);
        expect(report.driver).toBe(expectedDriver(report.runtime));
      });
    }
  },
);

/** Starts a fixture in `runtime` and resolves once it printed `ready`; `go()` then releases it. */
async function startClaimer(runtime: Runtime, args: string[]) {
  const child = spawn(runtime.command, [...runtime.args, fixture('sqlite-claimer.ts'), ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk));
  const exited = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.on('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{'))
        reject(new Error(`${runtime.name} exited ${code}: ${err}${out}`));
      else resolve(JSON.parse(last) as Record<string, unknown>);
    });
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
      if (out.startsWith('ready\n')) resolve();
    });
    exited.catch(reject);
  });
  return { go: () => child.stdin.end('go\n'), done: exited };
}

describe('several processes on one file', () => {
  // Two processes of this runtime and one of each other runtime here: node:sqlite, better-sqlite3
  // and bun:sqlite connections on one file, SQLite's file locks between them.
  const claimers = [runtimes.find((r) => r.name !== 'bun' && same(r.command, process.execPath)), ...runtimes];

  it('of all processes claiming the same 300 keys at once, exactly one wins each key', async () => {
    const path = file();
    createSqliteStore({ path }).close(); // the table exists before the race
    const started = await Promise.all(
      claimers.map((runtime) => startClaimer(runtime ?? runtimes[0]!, [path, '300'])),
    );
    for (const claimer of started) claimer.go();
    const reports = (await Promise.all(started.map((claimer) => claimer.done))) as {
      runtime: string;
      driver: string;
      won: string[];
      lost: Record<string, number>;
    }[];
    const wins = reports.flatMap((report) => report.won);
    expect(wins).toHaveLength(300);
    expect(new Set(wins).size).toBe(300);
    for (const report of reports) {
      // Every other answer is a live claim or a completed record: no timeout, no error.
      expect(
        Object.keys(report.lost).filter((status) => status !== 'in_progress' && status !== 'completed'),
      ).toEqual([]);
      expect(report.won.length + (report.lost.in_progress ?? 0) + (report.lost.completed ?? 0)).toBe(300);
    }
    console.log(reports.map((r) => `${r.runtime} ${r.driver}: won ${r.won.length}`).join('; '));
  });
});

describe('sqlite store specifics', () => {
  it('keeps claims and completed records across closing and reopening the file', async () => {
    const path = file();
    const clock = createManualClock();
    const first = createSqliteStore({ path, clock });
    const done = await first.claim('mail:delivery:done', { leaseMs: 30_000 });
    if (done.status !== 'claimed') throw new Error('not claimed');
    await first.complete('mail:delivery:done', done.token, { ttlMs: 60_000 });
    const held = await first.claim('mail:delivery:held', { leaseMs: 30_000 });
    await first.close();
    const again = createSqliteStore({ path, clock });
    expect(await again.claim('mail:delivery:done', { leaseMs: 30_000 })).toEqual({ status: 'completed' });
    expect(await again.claim('mail:delivery:held', { leaseMs: 30_000 })).toEqual({
      status: 'in_progress',
      leaseEndsAt: (held as { leaseEndsAt: number }).leaseEndsAt,
    });
    await again.close();
  });

  it('opens its file in WAL mode, and creates the table in it', async () => {
    const path = file();
    await createSqliteStore({ path, table: 'hooks_dedup' }).close();
    const raw = openRawSqlite(path);
    expect(raw.prepare('PRAGMA journal_mode').get()).toEqual(
      expect.objectContaining({ journal_mode: 'wal' }),
    );
    expect(raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([
      expect.objectContaining({ name: 'hooks_dedup' }),
    ]);
    raw.close();
  });

  it('leaves a database it was given open, and sets no pragma on it', async () => {
    const path = file();
    const database = openRawSqlite(path);
    const store = createSqliteStore({ database });
    expect((await store.claim('k', { leaseMs: 1_000 })).status).toBe('claimed');
    await store.close();
    await expect(store.claim('k2', { leaseMs: 1_000 })).rejects.toMatchObject({ code: 'store_unavailable' });
    expect(database.prepare('SELECT count(*) AS n FROM webhook_dedup').get()).toEqual(
      expect.objectContaining({ n: 1 }),
    );
    expect(database.prepare('PRAGMA journal_mode').get()).toEqual(
      expect.objectContaining({ journal_mode: 'delete' }),
    );
    database.close();
  });

  it('a full disk fails claims with store_unavailable (503), loses no record, and recovers', async () => {
    const database = openRawSqlite(file());
    const store = createSqliteStore({ database, clock: createManualClock() });
    const done = await store.claim('crm:delivery:done', { leaseMs: 15_000 });
    if (done.status !== 'claimed') throw new Error('not claimed');
    await store.complete('crm:delivery:done', done.token, { ttlMs: 86_400_000 });
    // No page may be added to the file any more: SQLite's SQLITE_FULL, as on a full disk.
    const { page_count: pages } = database.prepare('PRAGMA page_count').get() as { page_count: number };
    database.exec(`PRAGMA max_page_count = ${pages}`);
    let failed: unknown;
    for (let i = 0; i < 200 && !failed; i++) {
      await store
        .claim(`crm:delivery:${'x'.repeat(400)}${i}`, { leaseMs: 15_000 })
        .catch((error: unknown) => {
          failed = error;
        });
    }
    expect(failed).toMatchObject({ name: 'WebhookError', code: 'store_unavailable', status: 503 });
    expect(await store.claim('crm:delivery:done', { leaseMs: 15_000 })).toEqual({ status: 'completed' });
    database.exec('PRAGMA max_page_count = 1073741823');
    expect((await store.claim('crm:delivery:after', { leaseMs: 15_000 })).status).toBe('claimed');
    database.close();
  });

  it('reads a row it cannot read (an older table, a hand edit) as expired, with one warning', async () => {
    const path = file();
    const raw = openRawSqlite(path);
    // An older table: no NOT NULL, rowid; rows with a NULL, text in expires_at, a completed of 7.
    raw.exec(
      'CREATE TABLE webhook_dedup (key TEXT PRIMARY KEY, token TEXT, completed INTEGER, expires_at INTEGER)',
    );
    const future = Date.now() + 3_600_000;
    raw.exec(`INSERT INTO webhook_dedup VALUES
      ('crm:delivery:null-token', NULL, 0, ${future}),
      ('crm:delivery:text-time', 'old', 0, 'tomorrow'),
      ('crm:delivery:null-time', 'old', 0, NULL),
      ('crm:delivery:seven', 'old', 7, ${future}),
      ('crm:delivery:blob', X'00', 1, ${future})`);
    raw.close();
    const store = createSqliteStore({ path });
    await expectBadRowsReplaced(
      store,
      ['crm:delivery:null-token', 'crm:delivery:text-time', 'crm:delivery:null-time', 'crm:delivery:seven'],
      'crm:delivery:blob',
    );
    // A receiver answers such a key's delivery and runs its handler once.
    const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: store });
    let runs = 0;
    receiver.on('deal.won', () => void runs++);
    const delivery = crmDelivery('deal.won');
    const again = openRawSqlite(path);
    again.exec(`INSERT INTO webhook_dedup VALUES ('crm:delivery:${delivery.deliveryId}', 'old', 0, 'x')`);
    again.close();
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'handled' });
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(runs).toBe(1);
    await store.close();
  });

  it('reads a record whose expiry is no time (2^63 - 1, -2^63) as expired: never 503 on every claim', async () => {
    const path = file();
    const store = createSqliteStore({ path });
    const raw = openRawSqlite(path);
    raw.exec(`INSERT INTO webhook_dedup VALUES
      ('crm:delivery:max-lease', 'old', 0, 9223372036854775807),
      ('crm:delivery:max-done', 'old', 1, 9223372036854775807),
      ('crm:delivery:min', 'old', 0, -9223372036854775808),
      ('crm:delivery:max-abandon', 'old', 1, 9223372036854775807)`);
    raw.close();
    await expectBadRowsReplaced(
      store,
      ['crm:delivery:max-lease', 'crm:delivery:max-done', 'crm:delivery:min'],
      'crm:delivery:max-abandon',
    );
    expect(await store.prune()).toBe(0); // the replaced records are live
    await store.close();
  });

  it('prunes more records than one batch, and sweeps expired records as claims come in', async () => {
    const path = file();
    const clock = createManualClock();
    const store = createSqliteStore({ path, clock });
    const raw = openRawSqlite(path);
    const rows = () => (raw.prepare('SELECT count(*) AS n FROM webhook_dedup').get() as { n: number }).n;
    const expired = (prefix: string, count: number) => {
      raw.exec('BEGIN');
      const insert = raw.prepare(
        'INSERT INTO webhook_dedup (key, token, completed, expires_at) VALUES (?, ?, ?, ?) RETURNING key',
      );
      for (let i = 0; i < count; i++) insert.get(`${prefix}${i}`, `t${i}`, i % 2, clock.now() - 1);
      raw.exec('COMMIT');
    };
    expired('old', 1_200);
    expect(await store.prune()).toBe(1_200);
    expect(rows()).toBe(0);
    // Without prune(): every 500th granted claim deletes a batch of expired records afterwards.
    expired('old', 300);
    for (let i = 0; i < 499; i++) await store.claim(`live${i}`, { leaseMs: 60_000 });
    expect(rows()).toBe(799);
    await store.claim('the-500th', { leaseMs: 60_000 });
    await expect.poll(rows).toBe(500);
    raw.close();
    await store.close();
  });

  it('a file locked by another writer past storeTimeoutMs: 503, and the retry after it runs the handler once', async () => {
    const path = file();
    const dedup = createSqliteStore({ path });
    let runs = 0;
    const receiverWith = (storeTimeoutMs: number, more = {}) => {
      const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup, storeTimeoutMs, ...more });
      receiver.on('deal.won', () => void runs++);
      return receiver;
    };
    // The bound under test, met while the file is locked; the retries, once it is free, reach a
    // receiver on the same file whose bounds only a hang reaches (a loaded machine's disk is slow).
    const locked = receiverWith(200);
    const free = receiverWith(60_000, { timeoutMs: 60_000, leaseMs: 120_000 });
    const delivery = crmDelivery('deal.won');
    const other = openRawSqlite(path);
    other.exec('BEGIN IMMEDIATE'); // another writer holds the file, longer than the receiver waits
    expect(await deliver(locked, delivery)).toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(runs).toBe(0);
    other.exec('ROLLBACK');
    other.close();
    expect(await deliver(free, delivery)).toMatchObject({ status: 200, kind: 'handled' });
    expect(await deliver(free, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(runs).toBe(1);
    await dedup.close();
  });

  it('waits for a locked file without blocking the event loop, and gives up at the call bound', async () => {
    const path = file();
    const store = createSqliteStore({ path });
    const other = openRawSqlite(path);
    other.exec('BEGIN IMMEDIATE');
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    await expect(store.claim('k', { leaseMs: 1_000, callTimeoutMs: 300 })).rejects.toMatchObject({
      code: 'store_unavailable',
    });
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0); // timers ran while the claim waited
    other.exec('ROLLBACK');
    other.close();
    expect((await store.claim('k', { leaseMs: 1_000 })).status).toBe('claimed');
    await store.close();
  });

  it('rejects unusable options with options_invalid, and an unopenable file with store_unavailable', () => {
    const invalid = { name: 'WebhookError', code: 'options_invalid' };
    expect(() => createSqliteStore({})).toThrow(expect.objectContaining(invalid));
    expect(() => createSqliteStore({ path: ':memory:', database: openRawSqlite(':memory:') })).toThrow(
      expect.objectContaining(invalid),
    );
    expect(() => createSqliteStore({ path: '' })).toThrow(expect.objectContaining(invalid));
    expect(() => createSqliteStore({ path: ':memory:', synchronous: 'always' as never })).toThrow(
      expect.objectContaining(invalid),
    );
    expect(() => createSqliteStore({ database: {} as never })).toThrow(expect.objectContaining(invalid));
    for (const table of ['x; DROP TABLE y', 'a.b', '"q"', '1abc']) {
      expect(() => createSqliteStore({ path: ':memory:', table })).toThrow(expect.objectContaining(invalid));
    }
    const missing = join(dir, 'no-such-dir', 'dedup.sqlite');
    expect(() => createSqliteStore({ path: missing })).toThrow(
      expect.objectContaining({ code: 'store_unavailable', message: expect.stringContaining(missing) }),
    );
  });
});
