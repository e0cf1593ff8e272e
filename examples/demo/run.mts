/**
 * `npm run demo`: builds the package if dist/ is missing or older than src/, then plays the scenario
 * against the built package (imports resolve through package.json `exports` to dist/).
 * `npm run demo -- --trace` plays chapter 9 alone: the trace tree of one handed-off delivery.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

function newest(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((max, entry) => {
    const path = join(dir, entry.name);
    return Math.max(max, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }, 0);
}

const built = join(root, 'dist/testing.js');
if (!existsSync(built) || statSync(built).mtimeMs < newest(join(root, 'src'))) {
  // One line while it builds; the build's own log (about 200 lines) only when it fails.
  console.log('Building the package first (npm run build, about 30 s)…');
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) {
    process.stderr.write(`${build.stdout ?? ''}${build.stderr ?? ''}`);
    process.exit(build.status ?? 1);
  }
}

// `npm run demo -- --trace`: chapter 9 alone, the trace tree of one handed-off delivery.
if (process.argv.includes('--trace')) {
  const { traceChapter } = await import('./trace-chapter.js');
  const traced = await traceChapter(console.log);
  if ('skipped' in traced) console.log(`skipped: ${traced.skipped}`);
} else {
  const { runDemo } = await import('./scenario.js');
  await runDemo();
}
