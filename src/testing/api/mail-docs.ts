/**
 * `{base_url}/docs` and `{base_url}/docs/json` of the email API (email-service §1): the OpenAPI
 * description as JSON, and a small page listing its routes with a link to it. The page has no
 * script and loads nothing; every text on it is escaped (the base URL is the caller's Host), and its
 * Content-Security-Policy forbids anything but its own inline style.
 */

import { mailOpenApi } from './mail-openapi.js';
import { json } from './responses.js';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const METHODS = ['get', 'post', 'patch', 'delete'] as const;

function page(baseUrl: string): string {
  const document = mailOpenApi(baseUrl);
  const rows: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = (item as Record<string, { summary: string; description?: string } | undefined>)[method];
      if (!op) continue;
      rows.push(
        `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(op.summary)}</td><td>${escapeHtml(op.description ?? 'No authentication.')}</td></tr>`,
      );
    }
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(document.info.title)}</title>
<style>body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d2127}table{border-collapse:collapse}td,th{text-align:left;padding:.3rem .6rem;border-bottom:1px solid #e2e5ea}code{font-size:13px}</style>
</head><body>
<h1>${escapeHtml(document.info.title)}</h1>
<p>OpenAPI ${escapeHtml(document.openapi)}: <a href="${escapeHtml(`${baseUrl.replace(/\/$/, '')}/docs/json`)}">docs/json</a> (import it into an API client or generate a client from it). Server: <code>${escapeHtml(baseUrl)}</code>. Send <code>X-API-Key</code>.</p>
<p>${escapeHtml(document.info.description)}</p>
<table><thead><tr><th>Method</th><th>Path</th><th>What</th><th>Scope</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>
</body></html>
`;
}

/** The answer of `GET /docs` (`asJson` false) or `GET /docs/json`. */
export function docsResponse(asJson: boolean, baseUrl: string, headers: Record<string, string>): Response {
  if (asJson) return json(200, mailOpenApi(baseUrl), { 'Cache-Control': 'no-store', ...headers });
  return new Response(page(baseUrl), {
    status: 200,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy':
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      ...headers,
    },
  });
}
