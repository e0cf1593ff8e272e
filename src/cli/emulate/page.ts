/**
 * The emulator's page at `/`: the event catalogue with a payload editor (checked against the schemas
 * by the emulator before anything is sent), a form to add a webhook, the webhooks, the deliveries
 * with filters, and an inspector showing each attempt's request and answer. Updated live from
 * `/_emulator/stream` (server-sent events; a 5 s poll as a fallback). No external asset: the
 * machine running it may have no network. Every value is set with `textContent` (page-script.ts):
 * response bodies come from the apps under test and are never parsed as HTML.
 */
import { PAGE_SCRIPT } from './page-script.js';

const STYLE = `
  * { box-sizing: border-box; }
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d2127; background: #f4f5f8; }
  header { background: #fff; border-bottom: 1px solid #e2e5ea; padding: .8rem 1.5rem; }
  h1 { font-size: 1.25rem; margin: 0 0 .2rem; display: inline-block; margin-right: 1rem; }
  h2 { font-size: 1rem; margin: 0 0 .6rem; }
  h3 { font-size: .9rem; margin: .2rem 0 .4rem; }
  .meta, .muted { color: #5b6470; } .small { font-size: 12px; }
  code, .mono, pre, textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
  code { background: #eceef2; padding: 0 .25rem; border-radius: 3px; font-size: 12.5px; }
  #clocks { font-variant-numeric: tabular-nums; }
  main { display: grid; grid-template-columns: minmax(310px, 370px) minmax(0, 1fr); gap: 1.25rem; padding: 1.25rem 1.5rem; align-items: start; }
  section.card { background: #fff; border: 1px solid #e2e5ea; border-radius: 8px; padding: .9rem 1rem; margin-bottom: 1.25rem; overflow-x: auto; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .35rem .45rem; border-bottom: 1px solid #eceef2; vertical-align: top; }
  th { font-weight: 600; color: #4a5260; font-size: 12.5px; background: #f7f8fa; }
  td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
  td.time { font-variant-numeric: tabular-nums; line-height: 1.3; } td.time span { white-space: nowrap; }
  td.id { font-family: ui-monospace, monospace; font-size: 12px; word-break: break-all; } td.id.short { white-space: nowrap; word-break: normal; }
  tr[data-delivery] { cursor: pointer; } tr[data-delivery]:hover td { background: #f5f8ff; }
  tr.selected td { background: #e8f0fe !important; }
  .badge { padding: .05rem .45rem; border-radius: 9px; font-size: 12px; font-weight: 600; white-space: nowrap; }
  .succeeded, .active { background: #dff5e3; color: #17652b; } .failed, .paused, .inactive { background: #fde2e1; color: #9b1c1c; }
  .pending { background: #fff4d6; color: #7a5600; } .cancelled { background: #eceef2; color: #4a5260; }
  .error-code { color: #c0262d; font-weight: 600; }
  .ok-code { color: #17652b; font-weight: 600; }
  button { font: inherit; padding: .25rem .7rem; border: 1px solid #b9c0cb; border-radius: 5px; background: #fff; cursor: pointer; }
  td button { padding: .1rem .5rem; font-size: 13px; }
  button:hover { background: #eef0f4; } button.primary { background: #1f5fd6; border-color: #1f5fd6; color: #fff; }
  button.primary:hover { background: #184fb4; } button:disabled { opacity: .6; cursor: default; }
  label { display: block; font-size: 12.5px; color: #4a5260; margin: .5rem 0 .15rem; }
  input, select, textarea { font: inherit; padding: .3rem .45rem; border: 1px solid #c5cbd4; border-radius: 5px; background: #fff; width: 100%; }
  textarea { font-size: 12.5px; line-height: 1.4; min-height: 17rem; resize: vertical; }
  .row { display: flex; gap: .5rem; align-items: center; margin-top: .6rem; }
  .tabs { display: flex; gap: .25rem; margin-bottom: .5rem; }
  .tabs button[aria-pressed=true] { background: #1d2127; color: #fff; border-color: #1d2127; }
  #catalogue { max-height: 15rem; overflow-y: auto; border: 1px solid #e2e5ea; border-radius: 6px; }
  #catalogue button { display: block; width: 100%; text-align: left; border: 0; border-bottom: 1px solid #eceef2; border-radius: 0; padding: .35rem .55rem; }
  #catalogue button[aria-pressed=true] { background: #e8f0fe; }
  #catalogue .name { font-family: ui-monospace, monospace; font-size: 12.5px; font-weight: 600; }
  #catalogue .desc { display: block; font-size: 12px; color: #5b6470; }
  .errors { color: #c0262d; margin: .5rem 0 0; padding-left: 1.1rem; font-size: 13px; }
  .errors:empty { display: none; }
  #notice { margin: 0 0 .75rem; overflow-wrap: anywhere; } #notice:empty { display: none; }
  .filters { display: flex; gap: .6rem; align-items: end; margin-bottom: .6rem; flex-wrap: wrap; }
  .filters label { margin: 0; } .filters select { width: auto; min-width: 9rem; }
  .empty { color: #5b6470; font-style: italic; }
  .attempt { border: 1px solid #e2e5ea; border-radius: 6px; margin-top: .75rem; }
  .attempt > .summary { padding: .45rem .7rem; background: #f7f8fa; border-bottom: 1px solid #e2e5ea; display: flex; gap: 1rem; flex-wrap: wrap; align-items: baseline; }
  .exchange { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 0; }
  .exchange > div { padding: .5rem .7rem; min-width: 0; } .exchange > div + div { border-left: 1px solid #e2e5ea; }
  .headers td { padding: .1rem .4rem .1rem 0; border: 0; font-family: ui-monospace, monospace; font-size: 12px; word-break: break-all; }
  .headers td:first-child { color: #5b6470; white-space: nowrap; }
  pre { background: #f7f8fa; border: 1px solid #eceef2; border-radius: 5px; padding: .45rem .55rem; margin: .35rem 0 0; font-size: 12px; max-height: 18rem; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
  @media (max-width: 1000px) { main { grid-template-columns: 1fr; } .exchange { grid-template-columns: 1fr; } .exchange > div + div { border-left: 0; border-top: 1px solid #e2e5ea; } }
`;

/** The page's HTML. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>svc-webhooks emulator</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${STYLE}</style>
</head>
<body>
<header>
  <h1>svc-webhooks emulator</h1>
  <span id="live" class="muted">connecting…</span>
  <span class="muted"> · </span><span id="clocks" data-testid="clocks"></span>
  <div class="meta small">Email API <code id="mail-base"></code> key <code>zm_live_test_admin</code>
  (<a href="/docs">OpenAPI</a>) ·
  CRM API <code id="crm-base"></code> token <code>crm_test_token</code></div>
</header>
<main>
<div>
  <section class="card" aria-labelledby="send-title">
    <h2 id="send-title">Send an event</h2>
    <div class="tabs" role="group" aria-label="service">
      <button type="button" data-service-tab="mail" aria-pressed="true">Email</button>
      <button type="button" data-service-tab="crm" aria-pressed="false">CRM</button>
    </div>
    <div id="catalogue" data-testid="catalogue"></div>
    <label for="payload" id="payload-label">Payload</label>
    <textarea id="payload" data-testid="payload" spellcheck="false"></textarea>
    <div class="row">
      <button type="button" class="primary" data-testid="send-event">Send event</button>
      <button type="button" data-testid="reset-payload">Reset to fixture</button>
    </div>
    <ul class="errors" data-testid="payload-errors"></ul>
  </section>
  <section class="card" aria-labelledby="add-title">
    <h2 id="add-title">Add a webhook</h2>
    <form id="add-webhook" data-testid="add-webhook">
      <label for="add-service">Service</label>
      <select id="add-service" data-testid="add-service"><option value="mail">Email</option><option value="crm">CRM</option></select>
      <label for="add-url">URL of your app</label>
      <input id="add-url" data-testid="add-url" placeholder="http://127.0.0.1:3000/webhooks/mail" required>
      <label for="add-events">Events (comma-separated; empty: every event)</label>
      <input id="add-events" data-testid="add-events" placeholder="every event">
      <label for="add-secret">Secret (empty: a new one, shown once)</label>
      <input id="add-secret" data-testid="add-secret" placeholder="your app's secret, 16+ characters" autocomplete="off">
      <div class="row"><button type="submit" class="primary" data-testid="add-button">Add webhook</button></div>
      <ul class="errors" data-testid="add-errors"></ul>
    </form>
  </section>
</div>
<div>
  <div id="notice" data-testid="notice" role="status"></div>
  <section class="card">
    <h2>Webhooks</h2>
    <table data-testid="webhooks"><thead><tr><th>Service</th><th>Id</th><th>URL</th><th>Events</th><th>Status</th><th>Failures</th><th></th></tr></thead><tbody></tbody></table>
  </section>
  <section class="card">
    <h2>Deliveries</h2>
    <div class="filters">
      <div><label for="filter-service">Service</label><select id="filter-service" data-testid="filter-service"><option value="">all</option><option value="mail">mail</option><option value="crm">crm</option></select></div>
      <div><label for="filter-event">Event</label><select id="filter-event" data-testid="filter-event"><option value="">all</option></select></div>
      <div><label for="filter-status">Status</label><select id="filter-status" data-testid="filter-status"><option value="">all</option><option>succeeded</option><option>failed</option><option>pending</option><option>cancelled</option></select></div>
      <div class="small muted" id="shown-count"></div>
    </div>
    <table data-testid="deliveries"><thead><tr><th>Created</th><th>Service</th><th>Event</th><th>Delivery id</th><th>Status</th><th>Attempts</th><th>Answer</th><th>Duration</th><th>Next attempt</th><th></th></tr></thead><tbody></tbody></table>
  </section>
  <section class="card" id="inspector" data-testid="inspector" hidden>
    <h2>Delivery <span class="mono" id="inspector-id"></span></h2>
    <div class="small muted" id="inspector-meta"></div>
    <div id="inspector-attempts"></div>
  </section>
</div>
</main>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
