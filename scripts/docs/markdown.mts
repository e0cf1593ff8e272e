// Markdown to HTML for the docs site: GitHub-style heading ids (so the links between docs/*.md work
// the same on a code host and on the site), links to other pages rewritten to their .html, error codes
// in inline code linked to their row in the errors page, highlighted code, and the sections and
// headings each page contributes to the search index and its table of contents.
// Markdown is text, never markup: raw HTML shows as written (HTML comments, the docs' markers for CI,
// are dropped), and a link or image whose URL is not http(s), mailto or relative shows as its text.
import { posix } from 'node:path';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import json from 'highlight.js/lib/languages/json';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked, type Tokens } from 'marked';
import { linkDocMentions, linkTypeNames } from './html-links.mts';
import { type InstallTab, installTabs } from './install-tabs.mts';

hljs.registerLanguage('typescript', typescript);
hljs.registerLanguage('bash', bash);
hljs.registerLanguage('json', json);
hljs.registerLanguage('sql', sql);
hljs.registerLanguage('yaml', yaml);
const LANGUAGES: Record<string, string> = {
  ts: 'typescript',
  typescript: 'typescript',
  js: 'typescript',
  javascript: 'typescript',
  mjs: 'typescript',
  tsx: 'typescript',
  sh: 'bash',
  bash: 'bash',
  shell: 'bash',
  json: 'json',
  jsonc: 'json',
  sql: 'sql',
  yaml: 'yaml',
  yml: 'yaml',
};

export const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const decodeEntities = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** A run of HTML comments and nothing else: the docs' markers (`<!-- shell: skip … -->`), not shown. */
const COMMENTS_ONLY = /^\s*(?:<!--[\s\S]*?-->\s*)+$/;

const SAFE_SCHEMES = new Set(['http', 'https', 'mailto']);

/**
 * Whether a link or image URL may be emitted: http(s), mailto, or one without a scheme (a path, a
 * `#fragment`, `//host`). Judged on what a browser could read: character references decoded, and the
 * tabs, newlines, spaces and other controls it strips dropped, so `JaVaScRiPt:`, `java\tscript:` and
 * `&#106;avascript:` all count as `javascript:`. A first segment holding `:` or `&` with no allowed
 * scheme is refused.
 */
function isSafeUrl(href: string): boolean {
  const compact = href
    .replace(/&#x([0-9a-f]{1,6});?/gi, (_, hex: string) => codePoint(Number.parseInt(hex, 16)))
    .replace(/&#(\d{1,7});?/g, (_, dec: string) => codePoint(Number(dec)))
    .replace(/&colon;/gi, ':')
    .replace(/&(?:tab|newline);/gi, '')
    .replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  const head = compact.split(/[/?#]/, 1)[0]!;
  if (!head.includes(':') && !head.includes('&')) return true;
  const scheme = /^([a-z][a-z\d+.-]*):/i.exec(compact)?.[1];
  return scheme !== undefined && SAFE_SCHEMES.has(scheme.toLowerCase());
}

const codePoint = (n: number) => (n <= 0x10ffff ? String.fromCodePoint(n) : '\ufffd');

/** The text of rendered inline HTML: tags dropped, entities decoded. */
const decode = (html: string) => decodeEntities(html.replace(/<[^>]*>/g, ''));

/** GitHub's heading id: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function slugger() {
  const seen = new Map<string, number>();
  return (text: string) => {
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count === 0 ? base : `${base}-${count}`;
  };
}

/** One searchable part of a page: a section under a heading, an error code's row. */
export interface Section {
  /** URL relative to the site root, with its `#anchor`. */
  url: string;
  title: string;
  page: string;
  text: string;
}

export interface Rendered {
  html: string;
  title: string;
  /** The page's h2 and h3 headings, for its table of contents. */
  toc: Array<{ depth: number; id: string; text: string }>;
  sections: Section[];
}

export interface RenderContext {
  /** The markdown's path in the repository (`docs/dedup.md`, `README.md`), to resolve relative links. */
  source: string;
  /** The page's path in the site (`dedup.html`, `reference/sqlite.html`). */
  page: string;
  /** Repository path of a markdown file -> its page in the site. */
  pages: Map<string, string>;
  /** Error code -> its anchor in the site (`errors.html#signature_mismatch`). */
  errorCodes: Map<string, string>;
  /** Export name -> its reference entry from the site's root (`reference/sqlite.html#SqliteStore`), to link type names in declarations. */
  typeLinks?: Map<string, string>;
  /**
   * Sections that moved to another page (scripts/docs/moved.json): `docs/handoff.md#redis-requirements`
   * -> `docs/handoff-bullmq.md#redis-requirements`. A link to the old place is written to the new one.
   */
  moved?: Record<string, string>;
  /**
   * The published site's address (package.json `homepage`): the README links there, so its links work
   * on npm's page; on the site itself they stay within it, relative.
   */
  home?: string;
}

/** Renders one markdown document for the page `context.page`. */
export function renderMarkdown(markdown: string, context: RenderContext): Rendered {
  const slug = slugger();
  const toc: Rendered['toc'] = [];
  const fromPage = (target: string) => posix.relative(posix.dirname(context.page), target) || posix.basename(target);
  const isErrorsPage = context.errorCodes.size > 0 && [...context.errorCodes.values()][0]!.startsWith(`${context.page}#`);
  let title = '';

  const marked = new Marked({
    gfm: true,
    renderer: {
      heading({ tokens, depth }) {
        let inner = this.parser.parseInline(tokens);
        // `## name {#id}`: an explicit id (the reference pages use the export's own name).
        const explicit = /\s*\{#([\w$.-]+)\}\s*$/.exec(inner);
        if (explicit) inner = inner.slice(0, explicit.index);
        const text = decode(inner).trim();
        const id = explicit?.[1] ?? slug(text);
        if (depth === 1 && !title) title = text;
        if (depth === 2 || depth === 3) toc.push({ depth, id, text });
        return `<h${depth} id="${escapeHtml(id)}"><a class="anchor" href="#${escapeHtml(id)}" aria-hidden="true">#</a>${inner}</h${depth}>\n`;
      },
      code({ text, lang }) {
        const tabs = /^(sh|bash|shell)$/.test(lang ?? '') ? installTabs(text) : undefined;
        if (tabs) return tabbed(tabs);
        const language = LANGUAGES[(lang ?? '').split(/\s/)[0]!.toLowerCase()];
        let body = language ? hljs.highlight(text, { language, ignoreIllegals: true }).value : escapeHtml(text);
        const { typeLinks } = context;
        if (typeLinks && language === 'typescript')
          body = linkTypeNames(body, (name) => {
            const url = typeLinks.get(name);
            return url && `${fromPage(url.split('#')[0]!)}#${url.split('#')[1] ?? ''}`;
          });
        return `<pre><code class="hljs${language ? ` language-${language}` : ''}">${body}</code></pre>\n`;
      },
      codespan({ text }) {
        const raw = decodeEntities(text);
        const target = context.errorCodes.get(raw);
        const code = `<code>${escapeHtml(raw)}</code>`;
        return target ? `<a class="error-code" href="${fromPage(target.split('#')[0]!)}#${raw}">${code}</a>` : code;
      },
      html({ text, block }) {
        if (COMMENTS_ONLY.test(text)) return '';
        return block ? `<p>${escapeHtml(text.trim())}</p>\n` : escapeHtml(text);
      },
      link({ href, title: linkTitle, tokens }) {
        const inner = this.parser.parseInline(tokens);
        if (!isSafeUrl(href)) return inner;
        const url = rewriteHref(href, context, fromPage);
        const titleAttr = linkTitle ? ` title="${escapeHtml(linkTitle)}"` : '';
        if (url === undefined)
          return `<span class="repo-path" title="${escapeHtml(`in the repository: ${repoPath(href, context)}`)}">${inner}</span>`;
        const external = /^[a-z]+:/i.test(url) ? ' rel="noopener"' : '';
        return `<a href="${escapeHtml(url)}"${titleAttr}${external}>${inner}</a>`;
      },
      image({ href, title: imageTitle, text }) {
        if (!isSafeUrl(href)) return escapeHtml(text);
        const titleAttr = imageTitle ? ` title="${escapeHtml(imageTitle)}"` : '';
        return `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}"${titleAttr}>`;
      },
      tablerow({ text }) {
        const code = /^<td[^>]*>(?:<a [^>]*>)?<code>([a-z_]+)<\/code>/.exec(text)?.[1];
        const id = isErrorsPage && code && context.errorCodes.has(code) ? ` id="${code}"` : '';
        return `<tr${id}>\n${text}</tr>\n`;
      },
    },
  });

  const tokens = marked.lexer(markdown);
  const html = linkDocMentions(marked.parser(tokens), (mention) => {
    const page = context.pages.get(mention);
    return page && fromPage(page);
  });
  return { html, title: title || context.page, toc, sections: sectionsOf(tokens, context, title) };
}

/** An install command as npm / pnpm / yarn / bun tabs (site.js switches them; npm shows without it). */
function tabbed(tabs: InstallTab[]): string {
  const buttons = tabs
    .map(({ manager }, i) => `<button type="button" role="tab" aria-selected="${i === 0}" data-manager="${manager}">${manager}</button>`)
    .join('');
  const panels = tabs
    .map(({ manager, command }, i) => {
      const body = hljs.highlight(command, { language: 'bash', ignoreIllegals: true }).value;
      return `<pre role="tabpanel" data-manager="${manager}"${i === 0 ? '' : ' hidden'}><code class="hljs language-bash">${body}</code></pre>`;
    })
    .join('');
  return `<div class="install-tabs"><div role="tablist" aria-label="Package manager">${buttons}</div>${panels}</div>\n`;
}

function repoPath(href: string, context: RenderContext) {
  const [path = ''] = href.split('#');
  return posix.normalize(posix.join(posix.dirname(context.source), path));
}

/** A link's URL in the site, or undefined for a file of the repository that is not a page. */
function rewriteHref(href: string, context: RenderContext, fromPage: (target: string) => string) {
  const at = (page: string, hash: string) => `${fromPage(page)}${hash}`;
  if (context.home && href.startsWith(context.home)) {
    const [path = '', hash] = href.slice(context.home.length).split('#');
    const source = [...context.pages].find(([, page]) => page === path)?.[0];
    const moved = source && hash ? movedTo(context, source, hash) : undefined;
    return moved ? at(moved.page, `#${moved.anchor}`) : at(path || 'index.html', hash === undefined ? '' : `#${hash}`);
  }
  if (/^[a-z]+:/i.test(href) || href.startsWith('#') || href.startsWith('//')) return href;
  // Already a page of the site (the generated reference pages link to each other this way).
  if (/^[\w./-]+\.html(#.*)?$/.test(href)) return href;
  const hash = href.includes('#') ? href.slice(href.indexOf('#') + 1) : '';
  const path = repoPath(href, context);
  const moved = hash ? movedTo(context, path, hash) : undefined;
  if (moved) return at(moved.page, `#${moved.anchor}`);
  const page = context.pages.get(path);
  return page === undefined ? undefined : at(page, hash ? `#${hash}` : '');
}

/** Where the section `source#anchor` is now, when it moved to another page (scripts/docs/moved.json). */
function movedTo(context: RenderContext, source: string, anchor: string) {
  const [file = '', to = ''] = context.moved?.[`${source}#${anchor}`]?.split('#') ?? [];
  const page = context.pages.get(file);
  return page === undefined ? undefined : { page, anchor: to };
}

/** The page cut at its h1–h3 headings, plus one section per error code row of the errors table. */
function sectionsOf(tokens: Tokens.Generic[], context: RenderContext, pageTitle: string): Section[] {
  const slug = slugger();
  const sections: Section[] = [];
  let current: Section = { url: context.page, title: pageTitle, page: pageTitle, text: '' };
  const plain = (raw: string) => raw.replace(/<!--[\s\S]*?-->/g, '').replace(/[`*_>#|]+/g, ' ');
  for (const token of tokens) {
    if (token.type === 'heading') {
      const text = decode(new Marked().parseInline(token.text) as string).replace(/\s*\{#([\w$.-]+)\}\s*$/, '');
      const explicit = /\{#([\w$.-]+)\}\s*$/.exec(token.text)?.[1];
      const id = explicit ?? slug(text.trim());
      if (token.depth <= 3) {
        if (current.text.trim() || current.title) sections.push(current);
        current = { url: token.depth === 1 ? context.page : `${context.page}#${id}`, title: text.trim(), page: pageTitle, text: '' };
        continue;
      }
    }
    if (token.type === 'table') {
      for (const row of (token as Tokens.Table).rows) {
        const code = /^`([a-z_]+)`$/.exec(row[0]?.text ?? '')?.[1];
        const anchor = code ? context.errorCodes.get(code) : undefined;
        if (code && anchor === `${context.page}#${code}`)
          sections.push({ url: anchor, title: code, page: pageTitle, text: plain(row.map((c) => c.text).join(' ')) });
      }
    }
    if (token.type !== 'html') current.text += ` ${plain(token.raw)}`;
  }
  sections.push(current);
  return sections.filter((s) => s.title || s.text.trim());
}
