/**
 * The documentation site (`npm run docs`, scripts/docs/build.mts), built once into a temporary
 * folder, served on 127.0.0.1 and driven in a real headless Chromium (Debian's `chromium`, installed
 * by scripts/ensure-chromium.sh, through playwright-core): every page loads without a console error or
 * a failed request; every internal link and anchor resolves; the search box finds an error code's row
 * and an export's reference entry; each reference page documents exactly the exports of its entry
 * (etc/*.api.md, which CI compares with the source). Screenshots of the home page, a quickstart and a
 * reference page, and of the search box's results, go to .tmp/ (git-ignored). Every page carries a
 * Content-Security-Policy its own script, styles, search and highlighting satisfy, and a page built
 * from hostile Markdown runs none of it.
 */
import { execFile, execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../package/dist.js';
import { renderMarkdown } from './render-markdown.js';

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

/** The CSP violations the current page has reported so far (the init script in `beforeAll` collects them). */
const violations = async () => (await page.evaluate('window.__violations')) as string[];

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
  // Every Content-Security-Policy violation of a page, from before its first script.
  await browser.addInitScript(
    `window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.effectiveDirective + ' ' + e.blockedURI));`,
  );
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
      for (const v of await violations()) problems.push(`${path}: CSP violation ${v}`);
    }
    // The search index loads without an error too.
    current = 'search';
    await page.goto(`${base}/index.html`);
    await page.locator('#search').fill('webhook');
    await page.locator('#search-results a').first().waitFor();
    for (const v of await violations()) problems.push(`search: CSP violation ${v}`);
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
      'The CLI',
      'The emulator',
      'The inbox and its table',
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

  it('searches opened from a file, as the README says to open it: finds an error code and lands on it', async () => {
    const home = pathToFileURL(join(site, 'dedup.html')).href;
    await page.goto(home);
    await page.locator('#search').fill('signature_mismatch');
    const first = page.locator('#search-results a').first();
    await first.waitFor();
    await page.screenshot({ path: join(shots, 'site-search-from-file.png') });
    const target = pathToFileURL(join(site, 'errors.html')).href;
    expect(new URL((await first.getAttribute('href')) ?? '', page.url()).href).toBe(
      `${target}#signature_mismatch`,
    );
    await page.locator('#search').press('Enter');
    await page.waitForURL(`${target}#signature_mismatch`);
    expect(await violations()).toEqual([]);
  });

  it('has llms.txt and a Markdown copy of every page, each listed there', () => {
    const llms = readFileSync(join(site, 'llms.txt'), 'utf8');
    expect(llms).toMatch(/^# @svc\/webhooks\n\n> Receive /);
    for (const html of pages) {
      const copy = html.replace(/\.html$/, '.md');
      expect(existsSync(join(site, copy)), copy).toBe(true);
      expect(llms).toContain(`](https://svc.github.io/webhooks/${copy})`);
    }
    expect(readFileSync(join(site, 'errors.md'), 'utf8')).toContain('| `signature_mismatch` | 401 |');
    expect(readFileSync(join(site, 'getting-started.md'), 'utf8')).not.toContain('<!-- shell:');
  });

  it('reads at 1280 px and on a phone: no hidden sideways scroll, copy buttons, install tabs, previous/next, type links', async () => {
    await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    try {
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        for (const name of ['index.html', 'inbox.html', 'reference/sqlite.html']) {
          await page.goto(`${base}/${name}`);
          const hidden = await page.evaluate(
            `[...document.querySelectorAll('pre, table')].filter((e) => e.scrollWidth > e.clientWidth + 1 && e.tagName === 'PRE').length`,
          );
          expect(hidden, `${name} at ${width} px`).toBe(0);
          expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), name).toBe(
            true,
          );
        }
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${base}/index.html`);
      expect(
        await page.evaluate("document.querySelector('article').getBoundingClientRect().width"),
      ).toBeGreaterThanOrEqual(900);
      // Install tabs: pnpm chosen here holds on the next page.
      await page.locator('.install-tabs [role="tab"][data-manager="pnpm"]').first().click();
      await expect(page.locator('.install-tabs pre:not([hidden]) code').first().textContent()).resolves.toBe(
        'pnpm add @svc/webhooks zod',
      );
      await page.goto(`${base}/getting-started.html`);
      await expect(
        page.locator('.install-tabs pre:not([hidden]) code').first().textContent(),
      ).resolves.toMatch(/^pnpm add /);
      // A copy button copies the block's code, without its own label.
      await page.locator('article pre:not([hidden]) .copy').nth(1).click();
      const copied = (await page.evaluate('navigator.clipboard.readText()')) as string;
      expect(copied).toBe(await page.locator('article pre:not([hidden]) code').nth(1).textContent());
      expect(copied).not.toContain('Copy');
      // Previous / next follow the sidebar.
      await expect(page.locator('.pager a[rel="prev"]').textContent()).resolves.toContain('Overview');
      // The page after getting-started.html in the sidebar, whatever it is.
      const sidebar = (await page.evaluate(
        `[...document.querySelectorAll('.sidebar a')].map((a) => a.getAttribute('href')).filter((h) => !h.includes('#'))`,
      )) as string[];
      const after = sidebar[sidebar.indexOf('getting-started.html') + 1];
      await expect(page.locator('.pager a[rel="next"]').getAttribute('href')).resolves.toBe(after);
      // A type in a declaration links to its entry; an interface shows what it inherits.
      await page.goto(`${base}/reference/sqlite.html`);
      await page.locator('a.type-link', { hasText: 'DirectInboxOptions' }).first().click();
      await page.waitForURL(/reference\/sqlite\.html#DirectInboxOptions$/);
      await page.goto(`${base}/reference/main.html#MailReceiverOptions`);
      const options = await page.evaluate(
        `(() => { let at = document.getElementById('MailReceiverOptions'), text = ''; for (let i = 0; i < 8 && at; i++, at = at.nextElementSibling) text += at.textContent; return text; })()`,
      );
      expect(options).toMatch(/secret: [^\n]*\(from ReceiverOptions\)/);
      // A docs page named in prose is a link.
      await expect(
        page.locator('article a[href="../inbox.html"]', { hasText: 'docs/inbox.md' }).count(),
      ).resolves.toBeGreaterThan(0);
      for (const scheme of ['light', 'dark'] as const)
        for (const width of [1280, 390]) {
          await page.emulateMedia({ colorScheme: scheme });
          await page.setViewportSize({ width, height: 900 });
          for (const [name, shot] of [
            ['index.html', 'landing'],
            ['inbox.html', 'guide'],
            ['reference/sqlite.html', 'reference'],
          ] as const) {
            await page.goto(`${base}/${name}`);
            await page.screenshot({ path: join(shots, `site-${shot}-${width}-${scheme}.png`) });
          }
        }
    } finally {
      await page.emulateMedia({ colorScheme: null });
      await page.setViewportSize({ width: 1400, height: 900 });
      await browser.clearPermissions();
    }
  });

  it('keeps the old address of a section that moved to a page of its own (scripts/docs/moved.json)', async () => {
    const moved = JSON.parse(readFileSync(join(root, 'scripts/docs/moved.json'), 'utf8')) as Record<
      string,
      string
    >;
    const html = (source: string) => source.replace(/^docs\//, '').replace(/\.md$/, '.html');
    expect(Object.keys(moved).length).toBeGreaterThan(40);
    for (const [from, to] of Object.entries(moved)) {
      const [source = '', anchor = ''] = from.split('#');
      const [target = '', targetAnchor = ''] = to.split('#');
      // The old page no longer has the anchor (else the move would hide it); the new page has it.
      expect(crawled.get(html(source))?.ids.has(anchor), from).toBe(false);
      expect(crawled.get(html(target))?.ids.has(targetAnchor), to).toBe(true);
    }
    // Arriving with an old anchor goes on to the section's new page, from a link and from the address bar.
    await page.goto(`${base}/handoff.html#redis-requirements`);
    await page.waitForURL(`${base}/handoff-bullmq.html#redis-requirements`);
    await page.goto(`${base}/dedup.html#choosing-a-store`);
    await page.evaluate(`location.hash = 'sqlite-store-svcwebhookssqlite'`);
    await page.waitForURL(`${base}/dedup-sqlite.html#sqlite-store-svcwebhookssqlite`);
    // A link written to the old place (docs/cli-setup.md names handoff.md#setting-up-the-queues) leads to the new one.
    expect(
      crawled
        .get('cli-setup.html')
        ?.links.some((l) => l.path === 'handoff-sqs.html' && l.anchor === 'setting-up-the-queues'),
    ).toBe(true);
    // A page split off a long guide, at both widths and in both schemes: no hidden sideways scroll.
    try {
      for (const scheme of ['light', 'dark'] as const)
        for (const width of [1280, 390]) {
          await page.emulateMedia({ colorScheme: scheme });
          await page.setViewportSize({ width, height: 900 });
          await page.goto(`${base}/handoff-sqs.html`);
          const hidden = await page.evaluate(
            `[...document.querySelectorAll('pre')].filter((e) => e.scrollWidth > e.clientWidth + 1).length`,
          );
          expect(hidden, `handoff-sqs.html at ${width} px`).toBe(0);
          expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
          await page.screenshot({ path: join(shots, `site-split-${width}-${scheme}.png`) });
        }
    } finally {
      await page.emulateMedia({ colorScheme: null });
      await page.setViewportSize({ width: 1400, height: 900 });
    }
  });

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

  it("holds every page to a Content-Security-Policy that the site's own script, styles, search and highlighting satisfy", async () => {
    const problems: string[] = [];
    const onConsole = (message: { type(): string; text(): string }) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    };
    page.on('console', onConsole);
    try {
      // A guide with highlighted code (docs/dedup-sqlite.md).
      await page.goto(`${base}/dedup-sqlite.html`, { waitUntil: 'load' });
      const policy = (await page.evaluate(
        `document.querySelector('head meta[http-equiv="Content-Security-Policy"]')?.content ?? ''`,
      )) as string;
      expect(policy).toMatch(/(^|; )script-src 'self'(;|$)/);
      expect(policy).toMatch(/(^|; )default-src 'none'(;|$)/);
      expect(policy).not.toMatch(/unsafe-inline|unsafe-eval/);
      for (const file of pages) expect(readFileSync(join(site, file), 'utf8'), file).toContain(policy);
      // The stylesheet and the highlighting's classes apply; the search (site.js fetching the index) works.
      const styled = (await page.evaluate(`({
        header: getComputedStyle(document.querySelector('header.top')).position,
        keyword: getComputedStyle(document.querySelector('pre code .hljs-keyword')).color,
        plain: getComputedStyle(document.querySelector('pre code')).color,
      })`)) as { header: string; keyword: string; plain: string };
      expect(styled.header).toBe('sticky');
      expect(styled.keyword).not.toBe(styled.plain);
      await page.locator('#search').fill('createSqliteStore');
      await page.locator('#search-results a').first().waitFor();
      expect(await violations()).toEqual([]);
      expect(problems).toEqual([]);
      // And it is in force: an inline script added to the page does not run.
      const inline = await page.evaluate(`new Promise((resolve) => {
        document.addEventListener('securitypolicyviolation', (e) => resolve({ ran: window.__pwned === 1, directive: e.effectiveDirective }), { once: true });
        const script = document.createElement('script');
        script.textContent = 'window.__pwned = 1';
        document.body.append(script);
        if (window.__pwned === 1) resolve({ ran: true });
      })`);
      expect(inline).toEqual({ ran: false, directive: 'script-src-elem' });
    } finally {
      page.off('console', onConsole);
    }
  });

  it('runs no script from a page built from hostile Markdown', async () => {
    const probe = [
      '# Probe',
      '<img src=x onerror="window.__pwned = \'img\'">',
      '',
      '<script>document.title = "pwned"; window.__pwned = "script"</script>',
      '',
      'Inline <svg onload="window.__pwned = \'svg\'"></svg> and <b onmouseover="window.__pwned = \'b\'">bold</b>.',
      '',
      '<iframe srcdoc="<script>parent.__pwned = \'iframe\'</script>"></iframe>',
      '',
      '<details open ontoggle="window.__pwned = \'details\'"><summary>more</summary></details>',
      '',
      '<!-- marker --><script>window.__pwned = "after a comment"</script>',
      '',
      "[plain](javascript:window.__pwned='link') [cased](JaVaScRiPt:window.__pwned='cased')",
      "[entity](&#106;avascript:window.__pwned='entity') [tab](<java\tscript:window.__pwned='tab'>)",
      "<javascript:window.__pwned='autolink'> [data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
      "![image](javascript:window.__pwned='image')",
      '',
      '[ref][r]',
      '',
      "[r]: javascript:window.__pwned='ref'",
    ].join('\n');
    const article = renderMarkdown(probe, {
      source: 'docs/probe.md',
      page: 'probe.html',
      pages: new Map(),
      errorCodes: new Map(),
    }).html;
    // The probe in the site's own page around it (its head, scripts and policy).
    const shell = readFileSync(join(site, 'dedup.html'), 'utf8');
    writeFileSync(
      join(site, 'probe.html'),
      shell.replace(/<article>[\s\S]*<\/article>/, () => `<article>\n${article}</article>`),
    );
    const errors: string[] = [];
    const onError = (error: Error) => errors.push(error.message);
    page.on('pageerror', onError);
    try {
      await page.goto(`${base}/probe.html`, { waitUntil: 'load' });
      const state = (await page.evaluate(`({
        title: document.title,
        pwned: window.__pwned ?? null,
        elements: [...document.querySelectorAll('article *')].map((e) => e.localName).filter((n) => !['h1', 'p', 'a', 'b', 'strong', 'code'].includes(n)),
        handlers: [...document.querySelectorAll('article *')].flatMap((e) => [...e.attributes].map((a) => a.name).filter((n) => n.startsWith('on'))),
        links: [...document.querySelectorAll('article a[href]')].map((a) => a.protocol + ' ' + a.getAttribute('href')),
        text: document.querySelector('article').textContent,
      })`)) as {
        title: string;
        pwned: unknown;
        elements: string[];
        handlers: string[];
        links: string[];
        text: string;
      };
      expect(state.title).toBe(shell.match(/<title>([^<]*)<\/title>/)![1]!.replace(/&amp;/g, '&'));
      expect(state.pwned).toBeNull();
      expect(state.elements).toEqual([]);
      expect(state.handlers).toEqual([]);
      // Only the heading's own anchor.
      expect(state.links).toEqual(['http: #probe']);
      // The hostile markup and the links' text are still there to read.
      expect(state.text).toContain('<img src=x onerror=');
      expect(state.text).toMatch(/plain cased\s+entity tab/);
      // No link of the article runs a script when followed.
      const followed = await page.evaluate(
        `[...document.querySelectorAll('article a')].filter((a) => a.protocol === 'javascript:').map((a) => (a.click(), a.href))`,
      );
      expect(followed).toEqual([]);
      expect(await violations()).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      page.off('pageerror', onError);
    }
  });

  it('has the event reference: one page per event in the sidebar, its fields, sample, keys and send command', async () => {
    expect(pages.filter((p) => p.startsWith('events/') && p !== 'events/index.html')).toHaveLength(26);
    await page.goto(`${base}/events/mail/bounced.html`);
    const sidebar = (await page.locator('nav.sidebar').textContent()) ?? '';
    for (const name of ['bounced', 'incident_escalated', 'deal.won', 'score.rule_fired'])
      expect(sidebar).toContain(name);
    const article = (await page.locator('article').textContent()) ?? '';
    for (const text of [
      'client_id',
      'X-SvcMAIL-Sig',
      '"event": "bounced"',
      'mail:message:bounced:msg_',
      'npx svc-webhooks send mail bounced --url',
    ])
      expect(article).toContain(text);
    const file = join(shots, 'site-event-bounced.png');
    await page.screenshot({ path: file, fullPage: true });
    expect(statSync(file).size).toBeGreaterThan(10_000);
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
