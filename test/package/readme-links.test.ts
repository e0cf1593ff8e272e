/**
 * The README is the one page npm shows and the tarball ships: its links must work there, where no
 * `docs/` folder exists. Each is absolute: a page of the published site (package.json `homepage`,
 * whose site `npm run docs` builds from docs/*.md, so the page's source must exist) or a path of the
 * repository (package.json `repository`) that exists in this checkout. The site turns the first kind
 * back into its own relative links (test/site/markdown.test.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  homepage: string;
  repository: { url: string };
  bugs: { url: string };
};
const repository = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');

it('package.json leads to the site, the code and the issues', () => {
  expect(pkg.homepage).toMatch(/^https:\/\/[^/]+\/.*\/$/);
  expect(repository).toMatch(/^https:\/\/github\.com\/[\w-]+\/[\w-]+$/);
  expect(pkg.bugs.url).toBe(`${repository}/issues`);
});

it('every README link is absolute and names a page or file that exists', () => {
  const text = read('README.md').replace(/```[\s\S]*?```/g, '');
  const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
  expect(links.length).toBeGreaterThan(20);
  const wrong: string[] = [];
  for (const link of links) {
    if (link.startsWith(pkg.homepage)) {
      const page = link.slice(pkg.homepage.length).split('#')[0]!;
      const source =
        page.startsWith('reference/') || page === ''
          ? 'scripts/docs/build.mts'
          : `docs/${page.replace(/\.html$/, '.md')}`;
      if (!existsSync(new URL(source, root))) wrong.push(`${link}: no ${source}`);
    } else if (link.startsWith(`${repository}/`)) {
      const path = link
        .slice(repository.length)
        .replace(/^\/(tree|blob)\/main\//, '')
        .split('#')[0]!;
      if (!existsSync(new URL(path, root))) wrong.push(`${link}: no ${path} in the repository`);
    } else if (!/^https:\/\//.test(link)) wrong.push(`${link}: relative (no such path on npm's page)`);
  }
  expect(wrong).toEqual([]);
});
