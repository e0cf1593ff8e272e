// `npm run docs`: builds the static documentation site into site/ (git-ignored).
//   npx tsx scripts/docs/build.mts [--out DIR]
// Pages: README.md (the home page), every docs/*.md, one page per event of both services
// (scripts/docs/events.mts), and one API reference page per public entry of entries.json generated
// from its JSDoc (scripts/docs/api-model.mts). A sidebar by task
// (scripts/docs/nav.mts), a table of contents per page, and local full-text search (a MiniSearch
// index built here, loaded by the page). Offline: nothing is fetched. Fails, listing them, when an
// internal link or anchor of any page (or of the sidebar) does not resolve. A section that moved to a
// page of its own (scripts/docs/moved.json) keeps its old address: links to it are written to the new
// place, and the old page sends a visitor who arrives with the old anchor there.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import MiniSearch from 'minisearch';
import { WEBHOOK_ERROR_STATUS } from '../../src/shared/errors.ts';
import { type ApiEntry, apiModel, ROOT } from './api-model.mts';
import { SEARCH_OPTIONS } from './assets/tokenize.js';
import { eventPages } from './events.mts';
import { pageHtml, type SidebarGroup } from './layout.mts';
import { type Rendered, renderMarkdown, type Section } from './markdown.mts';
import { NAV } from './nav.mts';
import { proseAngles, referenceMarkdown, referencePage } from './reference.mts';

const ASSETS = join(ROOT, 'scripts/docs/assets');

interface Source {
  /** Repository path of the markdown, or a virtual one for generated pages. */
  source: string;
  page: string;
  markdown: string;
}

export interface BuildResult {
  out: string;
  pages: string[];
  referenceEntries: number;
  referenceExports: number;
  ms: number;
  /** Of which the TypeScript compiler's reading of the entries. */
  modelMs: number;
}

export async function buildSite(out = join(ROOT, 'site')): Promise<BuildResult> {
  const started = performance.now();
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort();
  const sources: Source[] = [
    { source: 'README.md', page: 'index.html', markdown: read('README.md') },
    ...docs.map((f) => ({ source: `docs/${f}`, page: f.replace(/\.md$/, '.html'), markdown: read(`docs/${f}`) })),
    ...(await eventPages()),
  ];
  const modelStarted = performance.now();
  const model = apiModel();
  const modelMs = performance.now() - modelStarted;
  const owners = new Map<string, ApiEntry[]>();
  for (const entry of model) for (const e of entry.exports) owners.set(e.name, [...(owners.get(e.name) ?? []), entry]);
  sources.push({ source: 'reference/index.md', page: 'reference/index.html', markdown: referenceIndex(model) });
  for (const entry of model)
    sources.push({ source: `reference/${entry.id}.md`, page: referencePage(entry), markdown: referenceMarkdown(entry, owners) });

  const pages = new Map(sources.map((s) => [s.source, s.page]));
  // Each export's entry on its first owner's reference page, for the type names of declarations.
  const typeLinks = new Map<string, string>();
  for (const entry of model)
    for (const e of entry.exports) if (!typeLinks.has(e.name)) typeLinks.set(e.name, `${referencePage(entry)}#${e.name}`);
  // On an entry's own page, its own exports link within the page.
  const typeLinksOf = (source: string) => {
    const entry = model.find((m) => `reference/${m.id}.md` === source);
    if (!entry) return typeLinks;
    const own = entry.exports.map((e): [string, string] => [e.name, `${referencePage(entry)}#${e.name}`]);
    return new Map([...typeLinks, ...own]);
  };
  const errorCodes = new Map(Object.keys(WEBHOOK_ERROR_STATUS).map((code) => [code, `errors.html#${code}`]));
  const moved = JSON.parse(read('scripts/docs/moved.json')) as Record<string, string>;
  const rendered = sources.map((s) => ({
    ...s,
    rendered: renderMarkdown(s.markdown, {
      source: s.source,
      page: s.page,
      pages,
      errorCodes,
      moved,
      home,
      ...(s.source.startsWith('reference/') ? { typeLinks: typeLinksOf(s.source) } : {}),
    }),
  }));
  const sidebar = sidebarOf(rendered, model);

  rmSync(out, { recursive: true, force: true });
  const html = new Map<string, string>();
  const redirects = movedAnchors(moved, pages);
  for (const { page, markdown, rendered: r } of rendered) {
    const text = pageHtml(page, r, sidebar, redirects.get(page));
    html.set(page, text);
    mkdirSync(dirname(join(out, page)), { recursive: true });
    writeFileSync(join(out, page), text);
    // The page as Markdown for machines (llms.txt lists them), its HTML comments dropped.
    writeFileSync(join(out, markdownCopy(page)), markdown.replace(/<!--[\s\S]*?-->\n?/g, ''));
  }
  writeFileSync(join(out, 'llms.txt'), llmsTxt(rendered));
  const broken = [...brokenLinks(html), ...brokenMoves(redirects, html)];
  if (broken.length > 0) throw new Error(`docs: ${broken.length} broken internal links:\n  ${broken.join('\n  ')}`);

  const search = new MiniSearch<Section & { id: number }>(SEARCH_OPTIONS);
  search.addAll(rendered.flatMap((r) => r.rendered.sections).map((s, id) => ({ ...s, id })));
  // Scripts, not JSON and modules: a page opened from a file may load a script beside it, but not
  // fetch a file or import a module (both are blocked there as cross-origin).
  writeFileSync(join(out, 'search-index.js'), `globalThis.SVC_WEBHOOKS_SEARCH = ${JSON.stringify(JSON.stringify(search))};\n`);
  mkdirSync(join(out, 'assets'), { recursive: true });
  writeFileSync(join(out, 'assets/site.js'), classicScript(['tokenize.js', 'site.js']));
  copyFileSync(join(ROOT, 'node_modules/minisearch/dist/umd/index.js'), join(out, 'assets/minisearch.js'));
  writeFileSync(
    join(out, 'assets/site.css'),
    `${read('node_modules/highlight.js/styles/github.css')}\n@media (prefers-color-scheme: dark) {\n${read('node_modules/highlight.js/styles/github-dark.css')}\n}\n${read('scripts/docs/assets/site.css')}`,
  );
  return {
    out,
    pages: [...html.keys()],
    referenceEntries: model.length,
    referenceExports: model.reduce((n, e) => n + e.exports.length, 0),
    ms: performance.now() - started,
    modelMs,
  };
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Where the Markdown copy of `page` goes: `dedup.html` -> `dedup.md`. */
const markdownCopy = (page: string) => page.replace(/\.html$/, '.md');

/** llms.txt (llmstxt.org): the package in a line, then every page's Markdown copy with its title. */
function llmsTxt(pages: Array<{ page: string; rendered: { title: string } }>): string {
  const { description } = JSON.parse(read('package.json')) as { description: string };
  const line = ({ page, rendered: r }: (typeof pages)[number]) => `- [${r.title}](${home ?? ''}${markdownCopy(page)})`;
  const guides = pages.filter((p) => !p.page.startsWith('reference/'));
  const reference = pages.filter((p) => p.page.startsWith('reference/'));
  return `# @svc/webhooks\n\n> ${description}\n\n## Docs\n\n${guides.map(line).join('\n')}\n\n## API reference\n\n${reference.map(line).join('\n')}\n`;
}

/** The page's modules as one classic script: their `import` lines dropped, `export` words removed. */
function classicScript(files: string[]): string {
  const code = files
    .map((file) => read(`scripts/docs/assets/${file}`))
    .join('\n')
    .replace(/^import .*;\n/gm, '')
    .replace(/^export /gm, '');
  return `(() => {\n${code}})();\n`;
}
/** Where the site is published (package.json `homepage`), which the README's links name. */
const home = (JSON.parse(read('package.json')) as { homepage?: string }).homepage;

function referenceIndex(model: ApiEntry[]): string {
  const lines = [
    '# API reference',
    '',
    'One page per entry of the package: every export with its declaration, its documentation and a',
    'type-checked example, generated from the same JSDoc your editor shows. The same declarations are',
    'committed in `etc/*.api.md` (`npm run api:update`), so a change to the public API shows in review.',
    '',
    '| import | exports | what |',
    '|---|---:|---|',
  ];
  for (const entry of model) {
    const summary = entry.moduleDoc.replace(/\s+/g, ' ').replace(/^`[^`]+`:\s*/, '').split(/(?<=\.)\s/)[0] ?? '';
    lines.push(`| [\`${entry.importPath}\`](${referencePage(entry).slice('reference/'.length)}) | ${entry.exports.length} | ${proseAngles(summary).replace(/\|/g, '\\|')} |`);
  }
  return lines.join('\n');
}

function sidebarOf(rendered: Array<Source & { rendered: Rendered }>, model: ApiEntry[]): SidebarGroup[] {
  const pageOf = new Map(rendered.map((r) => [r.source, r]));
  const named = new Set<string>();
  const groups: SidebarGroup[] = NAV.map((group) => ({
    title: group.title,
    links: group.items.map((item) => {
      const [file = '', anchor] = item.target.split('#');
      const target = pageOf.get(file);
      if (!target) throw new Error(`docs: the sidebar (scripts/docs/nav.mts) names ${file}, which is not a page`);
      named.add(file);
      return { text: item.text, url: `${target.page}${anchor ? `#${anchor}` : ''}` };
    }),
  }));
  const more = rendered
    .filter((r) => r.source.startsWith('docs/') && !named.has(r.source))
    .map((r) => ({ text: r.rendered.title, url: r.page }))
    .sort((a, b) => a.text.localeCompare(b.text, 'en'));
  if (more.length > 0) groups.push({ title: 'More guides', links: more });
  groups.push({
    title: 'API reference',
    links: [
      { text: 'All entries', url: 'reference/index.html' },
      ...model.map((entry) => ({ text: entry.importPath.replace('@svc/webhooks', '') || '@svc/webhooks', url: referencePage(entry) })),
    ],
  });
  return groups;
}

/** Per old page, each moved anchor and where it went (a URL from the site's root, with its anchor). */
function movedAnchors(moved: Record<string, string>, pages: Map<string, string>): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const [from, to] of Object.entries(moved)) {
    const [source = '', anchor = ''] = from.split('#');
    const [target = '', targetAnchor = ''] = to.split('#');
    const page = pages.get(source);
    const targetPage = pages.get(target);
    if (!page || !targetPage) throw new Error(`docs: scripts/docs/moved.json: ${from} -> ${to} names a file that is not a page`);
    out.set(page, (out.get(page) ?? new Map()).set(anchor, `${targetPage}#${targetAnchor}`));
  }
  return out;
}

/** Moves whose new place does not exist, or whose old anchor is still on its page (the move would hide it). */
function brokenMoves(redirects: Map<string, Map<string, string>>, html: Map<string, string>): string[] {
  const ids = (page: string) => new Set([...(html.get(page) ?? '').matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!));
  const broken: string[] = [];
  for (const [page, anchors] of redirects)
    for (const [anchor, url] of anchors) {
      const [target = '', to = ''] = url.split('#');
      if (!ids(target).has(to)) broken.push(`scripts/docs/moved.json: ${page}#${anchor} -> ${url} (no #${to} in ${target})`);
      if (ids(page).has(anchor)) broken.push(`scripts/docs/moved.json: ${page}#${anchor} is still on ${page}`);
    }
  return broken;
}

/** Internal links (href to a page of the site, with an optional anchor) that resolve to nothing. */
export function brokenLinks(html: Map<string, string>): string[] {
  const ids = new Map([...html].map(([page, text]) => [page, new Set([...text.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!))]));
  const broken = new Set<string>();
  for (const [page, text] of html) {
    for (const [, href = ''] of text.matchAll(/\shref="([^"]+)"/g)) {
      if (/^[a-z]+:/i.test(href) || href.startsWith('//')) continue;
      const [path = '', anchor] = href.replace(/&amp;/g, '&').split('#');
      const target = path ? posix.normalize(posix.join(posix.dirname(page), path)) : page;
      if (target.startsWith('assets/')) continue;
      if (!ids.has(target)) broken.add(`${page}: ${href} (no page ${target})`);
      else if (anchor && !ids.get(target)!.has(decodeURIComponent(anchor))) broken.add(`${page}: ${href} (no #${anchor} in ${target})`);
    }
  }
  return [...broken];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--out');
  const result = await buildSite(at > 0 ? process.argv[at + 1] : undefined);
  console.log(
    `docs: ${result.pages.length} pages (${result.referenceEntries} reference pages, ${result.referenceExports} exports) in ${posix.relative(ROOT, result.out) || result.out} in ${(result.ms / 1000).toFixed(1)} s (${(result.modelMs / 1000).toFixed(1)} s of it reading the entries with TypeScript)`,
  );
}
