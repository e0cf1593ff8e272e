/**
 * The documentation site (`npm run docs`, scripts/docs/build.mts), built once into a temporary
 * folder, served on 127.0.0.1 and driven in a real headless Chromium (Debian's `chromium`, installed
 * by scripts/ensure-chromium.sh, through playwright-core): every page loads without a console error or
 * a failed request; every internal link and anchor resolves; the search box finds an error code's row
 * and an export's reference entry; each reference page documents exactly the exports of its entry
 * (etc/*.api.md, which CI compares with the source). Screenshots of the home page, a quickstart and a
 * reference page, and of the search box's results, go to .tmp/ (git-ignored).
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../package/dist.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
};
const shots = join(root, '.tmp');

let work: string;
let site: string;
let server: Server;
let base: string;
let browser: BrowserContext;
let page: Page;
let profile: string;
let pages: string[] = [];
/** What the crawl saw on each page: ids, and links to this site (page path, anchor). */
const crawled = new Map<
  string,
  { ids: Set<string>; links: Array<{ path: string; anchor: string; text: string }> }
>();

/** Every .html file under `dir`, relative to it. */
function htmlFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix)).flatMap((name) => {
    const path = prefix ? `${prefix}/${name}` : name;
    if (statSync(join(dir, path)).isDirectory()) return htmlFiles(dir, path);
    return path.endsWith('.html') ? [path] : [];
  });
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'svc-site-'));
  site = join(work, 'site');
  const { stdout: log } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'scripts/docs/build.mts', '--out', site],
    { cwd: root, encoding: 'utf8' },
  );
  expect(log).toMatch(/^docs: \d+ pages/m);
  pages = htmlFiles(site).sort();
  server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
      /^\/+/,
      '',
    );
    const file = join(site, path.endsWith('/') || path === '' ? `${path}index.html` : path);
    if (!file.startsWith(site) || !existsSync(file) || statSync(file).isDirectory()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const executablePath = execFileSync('sh', [join(root, 'scripts/ensure-chromium.sh')], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  profile = mkdtempSync(join(tmpdir(), 'svc-site-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = browser.pages()[0] ?? (await browser.newPage());
  mkdirSync(shots, { recursive: true });
  // The build reads every entry with the TypeScript compiler (≈10 s of CPU): allow for a busy machine.
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  if (work) rmSync(work, { recursive: true, force: true });
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('the docs site in a browser', () => {
  it('has the home page, every docs/*.md page and a reference page per entry', () => {
    const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'));
    const entries = Object.keys(JSON.parse(readFileSync(join(root, 'entries.json'), 'utf8')));
    expect(pages).toContain('index.html');
    for (const f of docs) expect(pages).toContain(f.replace(/\.md$/, '.html'));
    expect(pages.filter((p) => p.startsWith('reference/') && p !== 'reference/index.html')).toHaveLength(
      entries.length,
    );
  });

  it('loads every page without a console error or a failed request', async () => {
    const problems: string[] = [];
    let current = '';
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning')
        problems.push(`${current}: console ${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`${current}: ${error.message}`));
    page.on('requestfailed', (request) => problems.push(`${current}: request failed ${request.url()}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${current}: ${response.status()} ${response.url()}`);
    });
    for (const path of pages) {
      current = path;
      await page.goto(`${base}/${path}`, { waitUntil: 'load' });
      // A string, evaluated in the page (the tests compile without the DOM's types).
      const seen = (await page.evaluate(`({
        ids: [...document.querySelectorAll('[id]')].map((e) => e.id),
        links: [...document.querySelectorAll('a[href]')].map((a) => ({ href: a.href, text: a.textContent ?? '' })),
      })`)) as { ids: string[]; links: Array<{ href: string; text: string }> };
      const links = seen.links
        .filter((l) => l.href.startsWith(`${base}/`))
        .map((l) => {
          const url = new URL(l.href);
          return {
            path: decodeURIComponent(url.pathname.slice(1)),
            anchor: decodeURIComponent(url.hash.slice(1)),
            text: l.text,
          };
        });
      crawled.set(path, { ids: new Set(seen.ids), links });
    }
    // The search index loads without an error too.
    current = 'search';
    await page.goto(`${base}/index.html`);
    await page.locator('#search').fill('webhook');
    await page.locator('#search-results a').first().waitFor();
    expect(problems).toEqual([]);
    expect(crawled.size).toBe(pages.length);
  }, 240_000);

  it('resolves every internal link and anchor', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const [from, { links }] of crawled) {
      for (const link of links) {
        const target = crawled.get(link.path);
        checked++;
        if (!target) broken.push(`${from}: "${link.text}" -> /${link.path} (no such page)`);
        else if (link.anchor && !target.ids.has(link.anchor))
          broken.push(`${from}: "${link.text}" -> /${link.path}#${link.anchor} (no such anchor)`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(1000);
  });

  it('lists the tasks in the sidebar', async () => {
    await page.goto(`${base}/index.html`);
    const sidebar = await page.locator('nav.sidebar').textContent();
    for (const task of [
      'Express',
      'Fastify',
      'Next.js',
      'Hono',
      'Koa',
      'NestJS',
      'Cloudflare Workers',
      'AWS Lambda',
      'Bun',
      'Deno',
    ])
      expect(sidebar).toContain(task);
    for (const group of [
      'Exactly-once and stores',
      'Hand-off mode',
      'Testing your handlers',
      'Observability',
      'The CLI and emulator',
      'Error codes and fixes',
    ])
      expect(sidebar).toContain(group);
  });

  for (const [query, expected, shows] of [
    ['signature_mismatch', 'errors.html#signature_mismatch', /no configured secret produces it/],
    ['createSqliteStore', 'reference/sqlite.html#createSqliteStore', /function createSqliteStore\(/],
  ] as const) {
    it(`finds ${query} with the search box and lands on it`, async () => {
      await page.goto(`${base}/dedup.html`);
      await page.locator('#search').fill(query);
      const first = page.locator('#search-results a').first();
      await first.waitFor();
      await page.screenshot({ path: join(shots, `site-search-${query}.png`) });
      const href = new URL((await first.getAttribute('href')) ?? '', page.url());
      expect(href.pathname + href.hash).toBe(`/${expected}`);
      await page.locator('#search').press('Enter');
      await page.waitForURL(`${base}/${expected}`);
      const id = expected.split('#')[1]!;
      await expect(page.locator(`[id="${id}"]`).isVisible()).resolves.toBe(true);
      // The row of the error code; the export's heading and the declaration after it.
      const text = await page.evaluate(
        `(() => { const at = document.getElementById(${JSON.stringify(id)}); return at.textContent + '\\n' + (at.nextElementSibling?.textContent ?? ''); })()`,
      );
      expect(text).toMatch(shows);
    });
  }

  it('documents every export of each entry on its reference page, and nothing else', () => {
    for (const file of readdirSync(join(root, 'etc')).filter((f) => f.endsWith('.api.md'))) {
      const names = [...readFileSync(join(root, 'etc', file), 'utf8').matchAll(/^## (\S+) \(\w+\)$/gm)].map(
        (m) => m[1],
      );
      const id = file.replace(/\.api\.md$/, '');
      const html = readFileSync(join(site, 'reference', `${id === 'index' ? 'main' : id}.html`), 'utf8');
      const documented = [...html.matchAll(/<h3 id="([^"]+)"/g)].map((m) => m[1]);
      expect(documented.sort(), id).toEqual(names.sort());
    }
  });

  it('shows code and JSDoc prose with angle brackets as written, never as HTML elements', async () => {
    await page.goto(`${base}/reference/fetch.html`);
    const article = (await page.locator('article').textContent()) ?? '';
    expect(article).toContain('(Request) => Promise<Response>');
    expect(await page.locator('article response').count()).toBe(0);
  });

  it('screenshots the home page, a quickstart and a reference page', async () => {
    for (const [path, name] of [
      ['index.html', 'site-home'],
      ['bun.html', 'site-quickstart-bun'],
      ['reference/sqlite.html', 'site-reference-sqlite'],
    ]) {
      await page.goto(`${base}/${path}`);
      const file = join(shots, `${name}.png`);
      await page.screenshot({ path: file });
      expect(statSync(file).size).toBeGreaterThan(10_000);
      expect(await page.locator('article h1').textContent()).not.toBe('');
    }
  });
});
