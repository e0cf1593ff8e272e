/**
 * `npm run demo`: builds the package if dist/ is missing or older than src/, then plays the scenario
 * against the built package (imports resolve through package.json `exports` to dist/).
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
  console.log('Building the package (npm run build)…');
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const { runDemo } = await import('./scenario.js');
await runDemo();
