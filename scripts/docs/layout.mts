// The HTML around every page of the site: header with the search box, the sidebar by task, the
// article, and the page's table of contents. Links are relative, so the site works from any folder
// and from a file server on 127.0.0.1.
import { posix } from 'node:path';
import { escapeHtml, type Rendered } from './markdown.mts';

export interface SidebarLink {
  text: string;
  /** Site URL from the root, with an optional anchor. */
  url: string;
}

export interface SidebarGroup {
  title: string;
  links: SidebarLink[];
}

/**
 * Every page's Content-Security-Policy: scripts (the search index is one), styles and images from the site
 * itself only (no inline script or style, no eval), the favicon's `data:` URL, no plugins, no `<base>`,
 * no form posts. A `<meta>` carries it so it holds on any static file server; it comes before every
 * resource of the page.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * `moved`: anchors of this page whose sections moved to another page, and where to (URLs from the
 * site's root); site.js sends a visitor who arrives with one of them there.
 */
export function pageHtml(page: string, rendered: Rendered, sidebar: SidebarGroup[], moved?: Map<string, string>): string {
  const root = posix.relative(posix.dirname(page), '.') || '.';
  const href = (url: string) => posix.relative(posix.dirname(page), url.split('#')[0]!) + (url.includes('#') ? url.slice(url.indexOf('#')) : '') || posix.basename(url);
  const nav = sidebar
    .map(
      (group) =>
        `<section><h2>${escapeHtml(group.title)}</h2><ul>${group.links
          .map((link) => {
            const current = link.url === page ? ' aria-current="page"' : '';
            return `<li><a href="${escapeHtml(href(link.url))}"${current}>${escapeHtml(link.text)}</a></li>`;
          })
          .join('')}</ul></section>`,
    )
    .join('\n');
  const toc = rendered.toc.length
    ? `<nav class="toc" aria-label="On this page"><h2>On this page</h2><ul>${rendered.toc
        .map((h) => `<li class="depth-${h.depth}"><a href="#${escapeHtml(h.id)}">${escapeHtml(h.text)}</a></li>`)
        .join('')}</ul></nav>`
    : '';
  // Previous and next in the sidebar's order (its first link to each page; anchors are not pages).
  const order = [...new Map(sidebar.flatMap((g) => g.links).filter((l) => !l.url.includes('#')).map((l) => [l.url, l])).values()];
  const at = order.findIndex((link) => link.url === page);
  const pager =
    at === -1
      ? ''
      : `<nav class="pager" aria-label="Previous and next">${[
          [order[at - 1], 'prev', 'Previous'],
          [order[at + 1], 'next', 'Next'],
        ]
          .map(([link, rel, label]) =>
            link && typeof link === 'object'
              ? `<a rel="${rel}" href="${escapeHtml(href(link.url))}"><span>${label}</span>${escapeHtml(link.text)}</a>`
              : '<span></span>',
          )
          .join('')}</nav>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(rendered.title)} · @svc/webhooks</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${root}/assets/site.css">
<script src="${root}/assets/minisearch.js" defer></script>
<script src="${root}/assets/site.js" defer></script>
</head>
<body data-root="${root}"${moved ? ` data-moved="${escapeHtml(JSON.stringify(Object.fromEntries([...moved].map(([anchor, url]) => [anchor, href(url)]))))}"` : ''}>
<header class="top">
  <a class="brand" href="${root}/index.html">@svc/webhooks</a>
  <div class="search">
    <input id="search" type="search" placeholder="Search the docs and the API" aria-label="Search" autocomplete="off">
    <ol id="search-results" hidden></ol>
  </div>
  <a class="top-link" href="${root}/reference/index.html">API reference</a>
</header>
<div class="layout">
<nav class="sidebar" aria-label="Documentation">
${nav}
</nav>
<main>
<article>
${rendered.html}
</article>
${pager}
</main>
${toc}
</div>
</body>
</html>
`;
}
