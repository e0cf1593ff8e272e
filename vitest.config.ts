import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const subpaths: Record<string, string> = JSON.parse(
  readFileSync(new URL('./entries.json', import.meta.url), 'utf8'),
);
const root = fileURLToPath(new URL('.', import.meta.url));

// Tests import the package by its public names; these resolve to the sources.
const alias = Object.entries(subpaths).map(([subpath, file]) => ({
  find: new RegExp(`^@svc/webhooks${subpath === '.' ? '' : `/${subpath}`}$`),
  replacement: `${root}${file}`,
}));

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['test/**/*.test.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    // Two files at a time on CI's two cores (vitest's default is one fewer than the cores): most
    // files wait on servers and child processes, not the CPU.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    // Receivers log warnings and errors to the console by default; the failure paths tests play
    // would bury the report. Tests that check those lines spy on the console (test/core/log-sink.test.ts).
    onConsoleLog: (log) => !log.startsWith('@svc/webhooks '),
  },
});
