import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const subpaths: Record<string, string> = JSON.parse(
  readFileSync(new URL('./entries.json', import.meta.url), 'utf8'),
);
const root = fileURLToPath(new URL('.', import.meta.url));

// Tests import the package by its public names; these resolve to the sources.
const alias = Object.entries(subpaths).map(([subpath, file]) => ({
  find: new RegExp(`^@svc/webhooks${subpath === '.' ? '' : `/${subpath}`}$`),
  replacement: `${root}${file}`,
}));

// The files that take longest (per-file durations of a CI run, longest first) start first, so the two
// workers finish together instead of one running a long fault suite alone at the end.
const SLOW_FILES = [
  'test/cli/commands.test.ts',
  'test/inbox/orm.test.ts',
  'test/inbox/kill.test.ts',
  'test/receivers/store-stall.test.ts',
  'test/handoff/pg-boss/crash.test.ts',
  'test/receivers/status-policy.test.ts',
  'test/cli/inbox.test.ts',
  'test/handoff/bullmq-outage.test.ts',
  'test/inbox/direct-kill.test.ts',
  'test/handoff/bullmq-crash.test.ts',
  'test/handoff/nats/faults.test.ts',
  'test/handoff/pg-boss/pg-boss.test.ts',
  'test/inbox/kill-orm.test.ts',
  'test/site/site.test.ts',
  'test/dedup/d1-store.test.ts',
  'test/handoff/sqs/faults.test.ts',
  'test/dedup/postgres-store.test.ts',
];

class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = SLOW_FILES.findIndex((slow) => file.moduleId.endsWith(slow));
      return index === -1 ? SLOW_FILES.length : index;
    };
    const sorted = await super.sort(files);
    return sorted
      .map((file, order) => ({ file, order }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.order - b.order)
      .map(({ file }) => file);
  }
}

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['test/**/*.test.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    // Two files at a time on CI's two cores (vitest's default is one fewer than the cores): most
    // files wait on servers and child processes, not the CPU.
    maxWorkers: 2,
    sequence: { sequencer: SlowFilesFirst },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    // Receivers log warnings and errors to the console by default; the failure paths tests play
    // would bury the report. Tests that check those lines spy on the console (test/core/log-sink.test.ts).
    onConsoleLog: (log) => !log.startsWith('@svc/webhooks '),
  },
});
