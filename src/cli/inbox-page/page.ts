/**
 * The inbox page at `/`: filters (status, service, event, ordering key), a bounded page of rows,
 * a row's fields, last error, headers and body, and re-drive with a confirmation. No external asset
 * (the machine may have no network); the only script and style are the inline ones, allowed by hash
 * in {@link PAGE_CSP}, so nothing a row holds could run even if it reached the markup.
 */
import { createHash } from 'node:crypto';
import { INBOX_STATUSES } from '../../inbox/types.js';
import { PAGE_SCRIPT } from './page-script.js';

const STYLE = `
  * { box-sizing: border-box; }
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d2127; background: #f4f5f8; }
  header { background: #fff; border-bottom: 1px solid #e2e5ea; padding: .8rem 1.5rem; }
  h1 { font-size: 1.25rem; margin: 0 1rem 0 0; display: inline-block; }
  h2 { font-size: 1rem; margin: 0 0 .6rem; } h3 { font-size: .9rem; margin: .8rem 0 .3rem; }
  .muted { color: #5b6470; } .small { font-size: 12px; }
  .mono, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
  main { padding: 1.25rem 1.5rem; display: grid; gap: 1.25rem; grid-template-columns: minmax(0, 7fr) minmax(0, 5fr); align-items: start; }
  section.card { background: #fff; border: 1px solid #e2e5ea; border-radius: 8px; padding: .9rem 1rem; overflow-x: auto; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .3rem .45rem; border-bottom: 1px solid #eceef2; vertical-align: top; white-space: nowrap; }
  td.mono, #detail-fields td, #detail-headers td, #detail-error { white-space: normal; overflow-wrap: anywhere; }
  th { font-weight: 600; color: #4a5260; font-size: 12.5px; background: #f7f8fa; }
  td.num { font-variant-numeric: tabular-nums; white-space: nowrap; } td.key { min-width: 8rem; max-width: 16rem; } td.event { min-width: 6rem; }
  tr[data-row] { cursor: pointer; } tr[data-row]:hover td { background: #f5f8ff; } tr.selected td { background: #e8f0fe; }
  #detail-fields th { width: 8rem; background: none; }
  .badge { padding: .05rem .45rem; border-radius: 9px; font-size: 12px; font-weight: 600; white-space: nowrap; background: #eceef2; color: #4a5260; }
  .handled { background: #dff5e3; color: #17652b; } .dead, .failed { background: #fde2e1; color: #9b1c1c; }
  .quarantined { background: #f3e3fd; color: #6b1c9b; } .received, .processing { background: #fff4d6; color: #7a5600; }
  .error-code, #detail-error { color: #c0262d; } #detail-error-code { font-weight: 600; }
  .filters { display: flex; gap: .6rem; align-items: end; flex-wrap: wrap; margin-bottom: .7rem; }
  .filters label { display: block; font-size: 12.5px; color: #4a5260; margin-bottom: .15rem; }
  input, select { font: inherit; padding: .3rem .45rem; border: 1px solid #c5cbd4; border-radius: 5px; background: #fff; }
  button { font: inherit; padding: .25rem .7rem; border: 1px solid #b9c0cb; border-radius: 5px; background: #fff; cursor: pointer; }
  button:hover { background: #eef0f4; } button:disabled { opacity: .5; cursor: default; }
  button.primary { background: #1f5fd6; border-color: #1f5fd6; color: #fff; } button.danger { background: #c0262d; border-color: #c0262d; color: #fff; }
  .row { display: flex; gap: .5rem; align-items: center; margin-top: .6rem; flex-wrap: wrap; }
  #notice { margin: 0 0 .75rem; padding: .45rem .7rem; border-radius: 6px; background: #dff5e3; overflow-wrap: anywhere; }
  #notice.bad { background: #fde2e1; } #notice:empty { display: none; }
  #confirm { border: 1px solid #e0b400; background: #fff8e0; border-radius: 6px; padding: .6rem .8rem; margin-bottom: .75rem; }
  .empty { color: #5b6470; font-style: italic; }
  pre { background: #f7f8fa; border: 1px solid #eceef2; border-radius: 5px; padding: .45rem .55rem; margin: .3rem 0 0; max-height: 28rem; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
  @media (max-width: 1100px) { main { grid-template-columns: 1fr; } }
`;

const options = (values: readonly string[]) => values.map((v) => `<option>${v}</option>`).join('');

/** The page's HTML: fixed markup; rows arrive as JSON and become text nodes. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>svc-webhooks inbox</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${STYLE}</style>
</head>
<body>
<header><h1>svc-webhooks inbox</h1><span class="muted mono" id="target" data-testid="target"></span></header>
<main>
<div>
  <div id="notice" data-testid="notice" role="status"></div>
  <div id="confirm" data-testid="confirm" role="alertdialog" aria-labelledby="confirm-text" hidden>
    <div id="confirm-text"></div>
    <div class="row"><button type="button" class="danger" id="confirm-yes" data-testid="confirm-yes">Re-drive</button>
    <button type="button" id="confirm-no" data-testid="confirm-no">Cancel</button></div>
  </div>
  <section class="card">
    <form class="filters" id="filters" data-testid="filters">
      <div><label for="filter-status">Status</label><select id="filter-status" data-testid="filter-status"><option value="">all</option>${options(INBOX_STATUSES)}</select></div>
      <div><label for="filter-service">Service</label><select id="filter-service" data-testid="filter-service"><option value="">all</option>${options(['mail', 'crm'])}</select></div>
      <div><label for="filter-event">Event</label><input id="filter-event" data-testid="filter-event" maxlength="256" placeholder="deal.won"></div>
      <div><label for="filter-key">Ordering key</label><input id="filter-key" data-testid="filter-key" maxlength="256" placeholder="crm:deal:…"></div>
      <button type="submit" class="primary" data-testid="apply">Apply</button>
      <button type="button" id="refresh" data-testid="refresh">Refresh</button>
      <button type="button" id="redrive-filter" data-testid="redrive-filter" disabled>Re-drive matching…</button>
    </form>
    <table id="rows" data-testid="rows"><thead><tr><th>Id</th><th>Status</th><th>Service</th><th>Event</th><th>Ordering key</th><th>Attempts</th><th>Received (UTC)</th><th>Error</th></tr></thead><tbody></tbody></table>
    <div class="row"><button type="button" id="newest" data-testid="newest" disabled>Newest</button>
    <button type="button" id="newer" data-testid="newer" disabled>← Newer</button>
    <button type="button" id="older" data-testid="older" disabled>Older →</button>
    <span class="small muted" id="page-label" data-testid="page-label"></span></div>
  </section>
</div>
<section class="card" id="detail" data-testid="detail" hidden>
  <h2>Row <span class="mono" id="detail-id"></span></h2>
  <table id="detail-fields"><tbody></tbody></table>
  <div id="detail-error" data-testid="detail-error" hidden><h3>Last error</h3><span id="detail-error-code" class="mono"></span> <span id="detail-error-message"></span></div>
  <div class="row"><button type="button" class="primary" id="redrive-row" data-testid="redrive-row">Re-drive this row…</button></div>
  <h3>Headers</h3>
  <table id="detail-headers" class="mono small"><tbody></tbody></table>
  <h3>Body <span class="small muted" id="detail-body-kind"></span></h3>
  <pre id="detail-body" data-testid="detail-body"></pre>
</section>
</main>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The page's Content-Security-Policy: nothing loads but its own inline script and style (by hash) and
 * calls to its own origin; no frames, no forms posting anywhere, no base URL.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(PAGE_SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
