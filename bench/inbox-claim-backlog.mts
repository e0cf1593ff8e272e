/**
 * The inbox worker's claim against one ordering key's backlog: one captured body replayed under fresh
 * ids, 0, 100,000 and 300,000 rows of ONE key waiting behind its head (running under a live lease),
 * and 20 other keys' due rows received after them. A claim of 8 rows must take the 20 other keys'
 * rows at a cost that does not follow the backlog (docs/inbox-ordering.md "Ordering").
 *
 * SQLite: instructions per claim, counted by callgrind in a child process over the seeded file (each
 * claim in `BEGIN … ROLLBACK`, so every claim finds the same rows; the frame alone is counted and
 * taken off), and the median time of a claim outside callgrind. PostgreSQL: shared buffers and rows
 * read by the claim (`EXPLAIN (ANALYZE, BUFFERS)`, deterministic), and its median execution and
 * planning times.
 *
 *   npx tsx bench/inbox-claim-backlog.mts [--write]
 *
 * INBOX_CLAIM_SIZES (`0,100000,300000`), INBOX_CLAIM_COUNT (claims counted per size, 50), INBOX_CLAIM_SQL: a module exporting `inboxStatements` to
 * measure instead of src/inbox/sql.ts (the claim of an earlier build, for a before/after).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { inboxStatements as current, toSqlite } from '../src/inbox/sql.js';
import { postgresBinDir, startPostgres } from '../test/support/servers.js';
import { openRawSqlite, rawSqliteDriver } from '../test/support/sqlite.js';
import { callgrindArgs, countsOf } from './callgrind.mjs';
import { writeBenchSection } from './docs-section.mjs';
import { median } from './support.mjs';
import { commandVersion } from './versions.mjs';

type Statements = Pick<ReturnType<typeof current>, 'ddl' | 'claim'>;
const module = process.env.INBOX_CLAIM_SQL;
const inboxStatements: (table: string, dialect: 'postgres' | 'sqlite') => Statements = module
  ? (await import(pathToFileURL(resolve(module)).href)).inboxStatements
  : current;

const SIZES = (process.env.INBOX_CLAIM_SIZES ?? '0,100000,300000').split(',').map(Number);
const CLAIMS = Number(process.env.INBOX_CLAIM_COUNT ?? 50);
const OTHERS = 20;
const LIMIT = 8;
const NOW = 10_000_000;
const TABLE = 'claim_backlog';
const PARAMS = [NOW, 30_000, LIMIT, 'mail'];
const COLUMNS =
  'dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, headers, body, lease_until';

/** The head of key K running under a live lease, `size` rows of K behind it, then the other keys' rows. */
function seedValues(size: number): unknown[][] {
  const row = (
    id: string,
    eventAt: number,
    key: string,
    status: string,
    at: number,
    lease: number | null,
  ) => [id, 'mail', 'delivered', id, eventAt, key, status, at, at, '{}', lease];
  const rows = [row('head', 1_000, 'mail:message:K', 'processing', 1, NOW + 60_000)];
  for (let i = 1; i <= size; i++) rows.push(row(`k${i}`, 1_000, 'mail:message:K', 'received', 1 + i, null));
  for (let i = 1; i <= OTHERS; i++)
    rows.push(row(`o${i}`, 2_000, `mail:message:o${i}`, 'received', size + 10 + i, null));
  return rows;
}

function seedSqlite(file: string, size: number): void {
  const db = openRawSqlite(file);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(inboxStatements(TABLE, 'sqlite').ddl);
  const insert = db.prepare(
    `INSERT INTO ${TABLE} (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, x'7b7d', ?)`,
  );
  db.exec('BEGIN');
  for (const values of seedValues(size)) insert.run(...(values as (string | number)[]));
  db.exec('COMMIT');
  db.close();
}

/** The child under callgrind: runs `count` claims (or frames alone) on each line it reads. */
async function loop(file: string): Promise<void> {
  const db = openRawSqlite(file);
  const claim = toSqlite(inboxStatements(TABLE, 'sqlite').claim, PARAMS);
  const statement = db.prepare(claim.text);
  const params = claim.params as (string | number)[];
  const once = (withClaim: boolean) => {
    db.exec('BEGIN');
    if (withClaim && statement.all(...params).length !== LIMIT) throw new Error('claim took too few rows');
    db.exec('ROLLBACK');
  };
  for (let i = 0; i < 20; i++) once(true);
  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) {
    const [what, count] = line.split(' ');
    for (let i = Number(count); i > 0; i--) once(what === 'claim');
    process.stdout.write('done\n');
  }
  db.close();
}

/** Instructions per claim on the seeded file: claims minus the `BEGIN … ROLLBACK` frames alone. */
async function sqliteInstructions(file: string, claims: number): Promise<number> {
  const out = join(tmpdir(), `svc-claim-backlog-${process.pid}.out`);
  const counts: number[] = [];
  for (const what of ['claim', 'frame']) {
    const child = spawn('valgrind', callgrindArgs(out, fileURLToPath(import.meta.url), '--loop', file), {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    await lines.next();
    execFileSync('callgrind_control', ['-i', 'on', String(child.pid)]);
    child.stdin!.write(`${what} ${claims}\n`);
    await lines.next();
    execFileSync('callgrind_control', ['-i', 'off', String(child.pid)]);
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.stdin!.end();
    });
    counts.push(countsOf(readFileSync(out, 'utf8')).total);
    rmSync(out, { force: true });
  }
  return (counts[0]! - counts[1]!) / claims;
}

function sqliteMedianMs(file: string, runs: number): number {
  const db = openRawSqlite(file);
  const claim = toSqlite(inboxStatements(TABLE, 'sqlite').claim, PARAMS);
  const statement = db.prepare(claim.text);
  const times: number[] = [];
  for (let i = 0; i < runs + 5; i++) {
    db.exec('BEGIN');
    const t0 = performance.now();
    statement.all(...(claim.params as (string | number)[]));
    if (i >= 5) times.push(performance.now() - t0);
    db.exec('ROLLBACK');
  }
  db.close();
  return median(times);
}

type PgFigures = { buffers: number; rowsRead: number; executionMs: number; planningMs: number };

/** Rows every scan node of a plan returned, loops included. */
function rowsRead(plan: string): number {
  let total = 0;
  for (const m of plan.matchAll(
    /(?:Index Scan|Index Only Scan|Seq Scan|Bitmap Heap Scan)[^\n]*\(actual rows=(\d+) loops=(\d+)\)/g,
  ))
    total += Number(m[1]) * Number(m[2]);
  return total;
}

async function postgresFigures(client: pg.Client, size: number, runs: number): Promise<PgFigures> {
  const sql = inboxStatements(TABLE, 'postgres');
  await client.query(`DROP TABLE IF EXISTS ${TABLE}`);
  for (const statement of sql.ddl.split(';\n')) await client.query(statement);
  // The same rows as seedValues, made by the server.
  const rows = (from: string, eventAt: string, key: string, status: string, at: string, lease: string) =>
    `INSERT INTO ${TABLE} (${COLUMNS}) SELECT ${from}, 'mail', 'delivered', ${from}, ${eventAt}, ${key}, '${status}', ${at}, ${at}, '{}', '\\x7b7d', ${lease}`;
  await client.query(
    `${rows("'head'", '1000', "'mail:message:K'", 'processing', '1', String(NOW + 60_000))}`,
  );
  await client.query(
    `${rows("'k' || n", '1000', "'mail:message:K'", 'received', '1 + n', 'NULL')} FROM generate_series(1, ${size}) AS n`,
  );
  await client.query(
    `${rows("'o' || n", '2000', "'mail:message:o' || n", 'received', `${size + 10} + n`, 'NULL')} FROM generate_series(1, ${OTHERS}) AS n`,
  );
  await client.query(`VACUUM ANALYZE ${TABLE}`);
  const explain = async (options: string) => {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query(`EXPLAIN (${options}) ${sql.claim}`, PARAMS);
      return rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
    } finally {
      await client.query('ROLLBACK');
    }
  };
  for (let i = 0; i < 5; i++) await explain('ANALYZE');
  const counted = await explain('ANALYZE, BUFFERS, TIMING OFF');
  const execution: number[] = [];
  const planning: number[] = [];
  for (let i = 0; i < runs; i++) {
    const plan = await explain('ANALYZE, TIMING OFF');
    execution.push(Number(/Execution Time: ([\d.]+)/.exec(plan)?.[1]));
    planning.push(Number(/Planning Time: ([\d.]+)/.exec(plan)?.[1]));
  }
  // The statement's own buffers: the top node's line (planning buffers are listed apart).
  const buffers = Number(/Buffers: shared hit=(\d+)/.exec(counted)?.[1]);
  return {
    buffers,
    rowsRead: rowsRead(counted),
    executionMs: median(execution),
    planningMs: median(planning),
  };
}

async function main(): Promise<void> {
  const write = process.argv.includes('--write');
  const dir = mkdtempSync(join(tmpdir(), 'svc-claim-backlog-'));
  const server = await startPostgres();
  const client = new pg.Client({ connectionString: server.connectionString });
  await client.connect();
  const lines: string[] = [];
  try {
    for (const size of SIZES) {
      const file = join(dir, `backlog-${size}.sqlite`);
      seedSqlite(file, size);
      const instructions = await sqliteInstructions(file, CLAIMS);
      const sqliteMs = sqliteMedianMs(file, CLAIMS);
      const p = await postgresFigures(client, size, Math.min(CLAIMS, 20));
      const line = `| ${size.toLocaleString('en-US')} | ${Math.round(instructions).toLocaleString('en-US')} | ${sqliteMs.toFixed(2)} | ${p.buffers} | ${p.rowsRead} | ${p.executionMs.toFixed(2)} | ${p.planningMs.toFixed(2)} |`;
      console.log(line);
      lines.push(line);
    }
  } finally {
    await client.end();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const section = `### Inbox claim against one key's backlog (\`bench/inbox-claim-backlog.mts\`)

A claim of ${LIMIT} rows with one key's head running under a live lease, that many rows of the key waiting
behind it (one body replayed under fresh ids: one event time), and ${OTHERS} other keys' due rows received
after them. SQLite: instructions per claim (callgrind, ${rawSqliteDriver()}, the \`BEGIN … ROLLBACK\` around
each claim taken off) and the median time of one; PostgreSQL: shared buffers and rows read by the claim
(\`EXPLAIN (ANALYZE, BUFFERS)\`) and the median execution and planning times.

| rows of the key waiting | SQLite instructions | SQLite ms | PostgreSQL buffers | PostgreSQL rows read | PostgreSQL execution ms | PostgreSQL planning ms |
|---|---|---|---|---|---|---|
${lines.join('\n')}

Machine: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} vCPU, shared; load average ${loadavg()[0]?.toFixed(1)} at the end), Node ${process.version},
PostgreSQL ${commandVersion(join(postgresBinDir() ?? '', 'postgres'), ['--version'], /(\d+\.\d+)/)}, SQLite through ${rawSqliteDriver()}.`;
  console.log(section);
  if (write) writeBenchSection('inbox-claim-backlog', section);
}

if (process.argv[2] === '--loop') await loop(process.argv[3]!);
else await main();
