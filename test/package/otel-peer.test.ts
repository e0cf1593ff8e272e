/**
 * `@opentelemetry/api` is an optional peer: in an app that lacks it, `@svc/webhooks/otel` fails at
 * import with an error naming the package, from ESM and CJS, while the root entry (whose receivers
 * never import it) loads and answers a delivery. The built package is copied (not linked: Node would
 * resolve a link's real path, next to this repository's node_modules) into a project holding zod only.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, root } from './dist.js';
import { reachable } from './graph.js';

let app: string;
let dist: string;

beforeAll(async () => {
  dist = await buildDist();
  app = mkdtempSync(join(tmpdir(), 'svc-webhooks-no-otel-'));
  const pkg = join(app, 'node_modules', '@svc', 'webhooks');
  mkdirSync(pkg, { recursive: true });
  cpSync(join(root, 'package.json'), join(pkg, 'package.json'));
  cpSync(dist, join(pkg, 'dist'), { recursive: true, filter: (path) => !path.endsWith('.json') });
  symlinkSync(join(root, 'node_modules', 'zod'), join(app, 'node_modules', 'zod'), 'dir');
  writeFileSync(join(app, 'package.json'), '{ "name": "app", "private": true }\n');
}, 180_000);

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

function run(args: string[]) {
  return spawnSync(process.execPath, args, { cwd: app, encoding: 'utf8' });
}

describe('without @opentelemetry/api installed', () => {
  it('the project really lacks it', () => {
    expect(() =>
      execFileSync(process.execPath, ['-e', "require.resolve('@opentelemetry/api')"], {
        cwd: app,
        stdio: 'pipe',
      }),
    ).toThrow();
  });

  it.each([
    ['ESM', ['--input-type=module', '-e', "await import('@svc/webhooks/otel')"]],
    ['CJS', ['-e', "require('@svc/webhooks/otel')"]],
  ])('%s: ./otel fails at load, naming the package', (_format, args) => {
    const result = run(args);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Cannot find (package|module) '@opentelemetry\/api'/);
  });

  it('the root entry loads and a receiver answers a delivery (ESM and CJS)', () => {
    const script = (load: string) => `
      const { createMailReceiver } = ${load};
      const receiver = createMailReceiver({ secret: 'whsec_no_otel_0123456789', logger: false });
      receiver.handle(new Request('http://x/', { method: 'POST', body: '{}' }))
        .then((response) => console.log('status', response.status));`;
    const esm = run(['--input-type=module', '-e', script("await import('@svc/webhooks')")]);
    expect(esm.stderr).toBe('');
    expect(esm.stdout.trim()).toBe('status 401');
    const cjs = run(['-e', script("require('@svc/webhooks')")]);
    expect(cjs.stderr).toBe('');
    expect(cjs.stdout.trim()).toBe('status 401');
  });

  it('only the otel entry imports it, in both formats', () => {
    for (const ext of ['js', 'cjs']) {
      const files = ['index', 'bullmq', 'pg-boss', 'express', 'fastify', 'node', 'fetch', 'next', 'testing'];
      for (const name of files) {
        expect([...reachable(dist, [`${name}.${ext}`]).external], `${name}.${ext}`).not.toContain(
          '@opentelemetry/api',
        );
      }
      expect([...reachable(dist, [`otel.${ext}`]).external]).toContain('@opentelemetry/api');
    }
  });
});
