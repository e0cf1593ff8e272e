/**
 * scripts/run-shell-blocks.mts (a gate of .ci/run) on a markdown file written for the purpose: what
 * counts as a failed block, the markers and their mistakes, one session per file (cd and export carry
 * over), servers waited for and stopped at the end of the file, and the counts line.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from './dist.js';

const fence = '```';
// A server on a fixed port, as the docs' servers are (the runner isolates the network).
const SERVER = `node -e "require('http').createServer().listen(47123, '127.0.0.1', () => console.log('listening'))"`;
let dir: string;
let run: { status: number | null; stdout: string };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-shell-blocks-test-'));
  const markdown = [
    '# Probe',
    `${fence}sh`,
    'false',
    'echo the last command passes, the block fails',
    fence,
    `${fence}bash`,
    'echo one && echo two | cat',
    'false && echo "a failed && list is no failure, as under set -e"',
    fence,
    '<!-- shell: skip -->',
    `${fence}sh`,
    'echo a skip without its reason fails the run',
    fence,
    '<!-- shell: skip — a real service, for the probe -->',
    `${fence}sh`,
    'exit 99',
    fence,
    '<!-- shell: a stray marker -->',
    '',
    '<!-- shell: server, ready when "listening" -->',
    `${fence}sh`,
    SERVER,
    fence,
    '<!-- shell: server, ready when "never printed" -->',
    `${fence}sh`,
    'echo bye',
    fence,
    `${fence}shell`,
    'cd docs && export PROBE_VALUE=42',
    fence,
    `${fence}sh`,
    'test "$PROBE_VALUE" = 42 && test "$(basename "$PWD")" = docs && test -f cli.md',
    fence,
    `${fence}sh`,
    'exit 3',
    fence,
    `${fence}sh`,
    'echo never run',
    fence,
  ].join('\n');
  writeFileSync(join(dir, 'probe.md'), `${markdown}\n`);
  // The next file starts the same server on the same port: it can only if the first one was stopped,
  // although the session that started it ended with `exit 3`.
  writeFileSync(
    join(dir, 'probe-2.md'),
    ['<!-- shell: server, ready when "listening" -->', `${fence}sh`, SERVER, fence, ''].join('\n'),
  );
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      'scripts/run-shell-blocks.mts',
      '--no-build',
      join(dir, 'probe.md'),
      join(dir, 'probe-2.md'),
    ],
    { cwd: root, encoding: 'utf8', timeout: 120_000 },
  );
  run = { status: result.status, stdout: result.stdout };
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('scripts/run-shell-blocks.mts', () => {
  it('fails a block on any failed command, not on a failed `a && b`', () => {
    expect(run.stdout).toMatch(/^FAIL {2}\S*probe\.md:2 \(.*\): a command failed$/m);
    expect(run.stdout).toMatch(/^ok {4}\S*probe\.md:6 /m);
  });

  it('prints skipped blocks with their reason; a marker without a reason or a stray marker fails', () => {
    expect(run.stdout).toMatch(/^skip {2}\S*probe\.md:15: a real service, for the probe$/m);
    expect(run.stdout).toMatch(/^FAIL {2}\S*probe\.md:10: a skip marker needs its reason/m);
    expect(run.stdout).toMatch(/^FAIL {2}\S*probe\.md:18: a shell marker not right above a block$/m);
  });

  it('waits for a server, fails one that exits first, and stops them all at the end of the file', () => {
    expect(run.stdout).toMatch(/^ok {4}\S*probe\.md:21 \(server\)/m);
    expect(run.stdout).toMatch(/^FAIL {2}\S*probe\.md:25 .*: it exited before printing "never printed"$/m);
    expect(run.stdout).toMatch(/^ok {4}\S*probe-2\.md:2 \(server\)/m);
  });

  it('runs the blocks of a file in one session: cd and export carry over; an exit ends the file', () => {
    expect(run.stdout).toMatch(/^ok {4}\S*probe\.md:31 /m);
    expect(run.stdout).toMatch(/^FAIL {2}\S*probe\.md:34 .*: the shell exited \(3\)$/m);
    expect(run.stdout).toMatch(/^FAIL {2}\S*probe\.md:37 .*: not run: an earlier block/m);
  });

  it('ends with the counts and exit 1', () => {
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('shell blocks: 6 passed, 6 failed, 1 skipped');
    expect(run.status).toBe(1);
  });
});
