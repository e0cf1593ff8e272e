/**
 * The SQLite inbox while another process holds the file's write lock: 20 concurrent deliveries wait
 * for it, and the receiving process's event loop must keep turning meanwhile. Reports the event-loop
 * delay (`monitorEventLoopDelay`, 1 ms resolution) while they wait: its maximum and p99, and how long
 * the deliveries took (they land once the lock is released).
 *
 *   npx tsx bench/inbox-lock-lag.mts [--write]
 *
 * INBOX_LOCK_HOLD_MS (1000, under the receiver's 2000 ms `storeTimeoutMs`), INBOX_LOCK_DELIVERIES (20), INBOX_LOCK_ROUNDS (3).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createMailReceiver } from '../src/index.js';
import { createSqliteInbox } from '../src/sqlite.js';
import { createSignedRequest } from '../src/testing/index.js';
import { holdSqliteLock } from '../test/support/sqlite-lock.js';
import { writeBenchSection } from './docs-section.mjs';
import { median } from './support.mjs';

const HOLD_MS = Number(process.env.INBOX_LOCK_HOLD_MS ?? 1_000);
const DELIVERIES = Number(process.env.INBOX_LOCK_DELIVERIES ?? 20);
const ROUNDS = Number(process.env.INBOX_LOCK_ROUNDS ?? 3);
const SECRET = 'whsec_bench_inbox_lock_0123456789abcdef';

/** A signed `delivered` of its own id and message. */
const delivery = () => createSignedRequest({ service: 'mail', event: 'delivered', secret: SECRET });

const dir = mkdtempSync(join(tmpdir(), 'svc-inbox-lock-'));
const rows: { maxMs: number; p99Ms: number; waitedMs: number; answered: string }[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    const file = join(dir, `inbox-${round}.sqlite`);
    const inbox = createSqliteInbox({ path: file });
    await inbox.migrate();
    const receiver = createMailReceiver({ secret: SECRET, handoff: inbox, logger: () => {} });
    const warm = await receiver.handle(await delivery());
    if (warm.status !== 200) throw new Error(`warm-up answered ${warm.status}`);
    const requests = await Promise.all(Array.from({ length: DELIVERIES }, delivery));
    const { released } = await holdSqliteLock(file, HOLD_MS);
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    const started = performance.now();
    const answers = await Promise.all(requests.map((request) => receiver.handle(request)));
    const waitedMs = performance.now() - started;
    histogram.disable();
    await released;
    await inbox.close();
    const statuses = answers.map((a) => a.status);
    rows.push({
      maxMs: histogram.max / 1e6,
      p99Ms: histogram.percentile(99) / 1e6,
      waitedMs,
      answered: `${statuses.filter((s) => s === 200).length}/${DELIVERIES} 200${statuses.some((s) => s !== 200) ? ` (${statuses.filter((s) => s !== 200).join(' ')})` : ''}`,
    });
    console.log(JSON.stringify(rows.at(-1)));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const section = `### SQLite inbox while another process holds the write lock (\`bench/inbox-lock-lag.mts\`)

${DELIVERIES} concurrent deliveries to a SQLite inbox while another process holds the file's write lock
(\`BEGIN IMMEDIATE\`) for ${HOLD_MS} ms; the event-loop delay of the receiving process meanwhile
(\`monitorEventLoopDelay\`), ${ROUNDS} rounds, median of each figure.

| event-loop delay max | p99 | deliveries took | answered |
|---|---|---|---|
| ${median(rows.map((r) => r.maxMs)).toFixed(1)} ms | ${median(rows.map((r) => r.p99Ms)).toFixed(1)} ms | ${median(rows.map((r) => r.waitedMs)).toFixed(0)} ms | ${rows.map((r) => r.answered).join(', ')} |

Machine: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} vCPU, shared; load average ${loadavg()[0]?.toFixed(1)} at the end), Node ${process.version}.`;
console.log(section);
if (process.argv.includes('--write')) writeBenchSection('inbox-lock-lag', section);
