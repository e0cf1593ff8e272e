/**
 * The emulator's page at `/`: webhooks, deliveries and their attempts, updated live from
 * `/_emulator/stream` (server-sent events; a 5 s poll as a fallback), with buttons to emit an event,
 * retry a delivery, reactivate a webhook and rotate its secret. Every value is set with
 * `textContent`: response bodies come from the apps under test and are never parsed as HTML.
 */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>svc-webhooks emulator</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d2127; background: #f7f8fa; }
  h1 { font-size: 1.3rem; margin: 0 0 .25rem; } h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
  .meta { color: #5b6470; } code { background: #eceef2; padding: 0 .25rem; border-radius: 3px; }
  table { border-collapse: collapse; width: 100%; background: #fff; box-shadow: 0 1px 2px #0001; }
  th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e6e8ec; vertical-align: top; }
  th { background: #eef0f4; font-weight: 600; } td.num { font-variant-numeric: tabular-nums; }
  tr.attempt td { background: #fafbfc; color: #4a5260; font-size: 12.5px; padding-left: 2rem; }
  .badge { padding: .05rem .45rem; border-radius: 9px; font-size: 12px; font-weight: 600; }
  .succeeded, .active { background: #dff5e3; color: #17652b; } .failed, .paused, .inactive { background: #fde2e1; color: #9b1c1c; }
  .pending { background: #fff4d6; color: #7a5600; } .cancelled { background: #eceef2; color: #4a5260; }
  button { font: inherit; padding: .15rem .6rem; border: 1px solid #b9c0cb; border-radius: 4px; background: #fff; cursor: pointer; }
  button:hover { background: #eef0f4; } form { display: flex; gap: .5rem; align-items: center; margin: .5rem 0; }
  input, select { font: inherit; padding: .15rem .35rem; } #notice { min-height: 1.4em; color: #17652b; }
  .empty { color: #5b6470; font-style: italic; }
</style>
</head>
<body>
<h1>svc-webhooks emulator</h1>
<div class="meta">Email API <code id="mail-base"></code> key <code>zm_live_test_admin</code> ·
CRM API <code id="crm-base"></code> token <code>crm_test_token</code> · speed <span id="speed"></span>× ·
<span id="live">connecting…</span></div>
<form id="emit">
  <select id="emit-service" data-testid="emit-service"><option>mail</option><option>crm</option></select>
  <input id="emit-event" data-testid="emit-event" value="delivered" size="22" aria-label="event name">
  <button type="submit" data-testid="emit-button">Emit event</button>
</form>
<div id="notice" data-testid="notice"></div>
<h2>Webhooks</h2>
<table data-testid="webhooks"><thead><tr><th>Service</th><th>Id</th><th>URL</th><th>Events</th><th>Status</th><th>Failures</th><th></th></tr></thead><tbody></tbody></table>
<h2>Deliveries</h2>
<table data-testid="deliveries"><thead><tr><th>Created</th><th>Service</th><th>Event</th><th>Delivery id</th><th>Status</th><th>Attempts</th><th>Response</th><th>Duration</th><th>Next attempt</th><th></th></tr></thead><tbody></tbody></table>
<script>
(() => {
  const $ = (s) => document.querySelector(s);
  $('#mail-base').textContent = location.origin + '/api/v1';
  $('#crm-base').textContent = location.origin + '/v1';
  const el = (tag, text, attrs) => {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    return node;
  };
  const badge = (text) => el('span', text, { class: 'badge ' + text });
  const post = async (path, body) => {
    const response = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body || {}) });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error((data.error && data.error.message) || ('HTTP ' + response.status));
    return data;
  };
  const notice = (text, bad) => { const n = $('#notice'); n.textContent = text; n.style.color = bad ? '#9b1c1c' : '#17652b'; };
  const act = (label, path, done) => {
    const b = el('button', label, { 'data-testid': label.toLowerCase().replace(/ /g, '-') });
    b.addEventListener('click', async () => {
      b.disabled = true;
      try { const data = await post(path); notice(done(data)); } catch (e) { notice(label + ' failed: ' + e.message, true); }
      b.disabled = false; refresh();
    });
    return b;
  };
  let state = null;
  function relative(iso) {
    if (!iso || !state) return '';
    const seconds = (Date.parse(iso) - state.now) / 1000 / state.speed;
    return seconds <= 0 ? 'due' : 'in ' + (seconds < 90 ? Math.ceil(seconds) + ' s' : Math.round(seconds / 60) + ' min');
  }
  function render() {
    $('#speed').textContent = state.speed;
    const hooks = $('[data-testid=webhooks] tbody');
    hooks.replaceChildren();
    if (state.webhooks.length === 0) {
      const td = el('td', 'No webhooks yet: register one with POST /api/v1/webhooks (email) or POST /v1/webhooks (CRM).', { colspan: 7, class: 'empty' });
      hooks.append(el('tr')); hooks.lastChild.append(td);
    }
    for (const w of state.webhooks) {
      const status = w.service === 'mail' ? w.status : (w.active ? 'active' : 'inactive');
      const tr = el('tr', undefined, { 'data-webhook': w.id });
      const actions = el('td');
      if (status !== 'active') actions.append(act('Reactivate', '/_emulator/' + w.service + '/webhooks/' + encodeURIComponent(w.id) + '/reactivate', () => 'Webhook ' + w.id + ' reactivated.'));
      actions.append(' ', act('Rotate secret', '/_emulator/' + w.service + '/webhooks/' + encodeURIComponent(w.id) + '/rotate-secret', (d) => 'New secret of ' + w.id + ': ' + d.secret));
      const statusCell = el('td'); statusCell.append(badge(status));
      tr.append(el('td', w.service), el('td', w.id), el('td', w.url), el('td', (w.events || []).join(', ')), statusCell,
        el('td', w.service === 'mail' ? w.consecutiveFailures : '', { class: 'num' }), actions);
      hooks.append(tr);
    }
    const rows = $('[data-testid=deliveries] tbody');
    rows.replaceChildren();
    if (state.deliveries.length === 0) {
      const tr = el('tr'); tr.append(el('td', 'No deliveries yet: emit an event above, or POST /_emulator/events.', { colspan: 10, class: 'empty' })); rows.append(tr);
    }
    for (const d of state.deliveries) {
      const last = d.attempts[d.attempts.length - 1];
      const tr = el('tr', undefined, { 'data-delivery': d.id, 'data-status': d.status });
      const statusCell = el('td'); statusCell.append(badge(d.status));
      const actions = el('td');
      if (d.service === 'mail' && d.status !== 'pending') actions.append(act('Retry', '/_emulator/mail/webhooks/' + encodeURIComponent(d.webhookId) + '/deliveries/' + encodeURIComponent(d.id) + '/retry', (a) => 'Retried ' + d.id + ': ' + (a.statusCode || a.error)));
      tr.append(el('td', d.createdAt.slice(11, 19)), el('td', d.service), el('td', d.event + (d.test ? ' (test)' : '')), el('td', d.id),
        statusCell, el('td', d.attempts.length, { class: 'num', 'data-testid': 'attempt-count' }),
        el('td', last ? (last.statusCode || last.error) : '', { class: 'num' }), el('td', last ? last.durationMs + ' ms' : '', { class: 'num' }),
        el('td', relative(d.nextAttemptAt)), actions);
      rows.append(tr);
      for (const a of d.attempts) {
        const at = el('tr', undefined, { class: 'attempt' });
        at.append(el('td', a.attemptedAt.slice(11, 23)), el('td', '#' + a.attempt + ' ' + a.kind, { colspan: 3 }),
          el('td', a.success ? 'ok' : 'failed'), el('td', ''), el('td', a.statusCode || '-', { class: 'num' }),
          el('td', a.durationMs + ' ms', { class: 'num' }), el('td', a.error || (a.responseBody || '').slice(0, 80), { colspan: 2 }));
        rows.append(at);
      }
    }
  }
  let inFlight = false;
  async function refresh() {
    if (inFlight) return; inFlight = true;
    try { state = await (await fetch('/_emulator/state', { cache: 'no-store' })).json(); render(); } catch (e) { $('#live').textContent = 'disconnected'; }
    inFlight = false;
  }
  $('#emit').addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const data = await post('/_emulator/events', { service: $('#emit-service').value, event: $('#emit-event').value.trim() });
      notice('Emitted ' + data.event + ' to ' + data.deliveries.length + ' webhook(s).');
    } catch (err) { notice('Emit failed: ' + err.message, true); }
    refresh();
  });
  const stream = new EventSource('/_emulator/stream');
  stream.addEventListener('open', () => { $('#live').textContent = 'live'; });
  stream.addEventListener('change', refresh);
  stream.addEventListener('error', () => { $('#live').textContent = 'reconnecting…'; });
  setInterval(refresh, 5000);
  refresh();
})();
</script>
</body>
</html>
`;
