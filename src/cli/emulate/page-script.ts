/**
 * The emulator page's script (page.ts embeds it): the catalogue and payload editor, the add-webhook
 * form, the webhooks and deliveries tables with their filters, the attempt inspector, the clocks.
 * Plain DOM calls; every value from the emulator or an app is set with `textContent`.
 */
export const PAGE_SCRIPT = `
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
  const time = (ms) => new Date(ms).toTimeString().slice(0, 8);
  const isoTime = (iso) => (iso ? time(Date.parse(iso)) : '');
  async function call(method, path, body) {
    const response = await fetch(path, { method, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      const error = new Error((data.error && data.error.message) || ('HTTP ' + response.status));
      error.issues = (data.error && data.error.issues) || [];
      throw error;
    }
    return data;
  }
  const notice = (text, bad) => { const n = $('#notice'); n.textContent = text; n.style.color = bad ? '#c0262d' : '#17652b'; };
  const showErrors = (list, items) => list.replaceChildren(...items.map((t) => el('li', t)));
  const act = (label, path, done) => {
    const b = el('button', label, { type: 'button', 'data-testid': label.toLowerCase().replace(/ /g, '-') });
    b.addEventListener('click', async (e) => {
      e.stopPropagation(); b.disabled = true;
      try { notice(done(await call('POST', path, {}))); } catch (err) { notice(label + ' failed: ' + err.message, true); }
      b.disabled = false; refresh();
    });
    return b;
  };

  // The catalogue and the payload editor.
  let catalogue = [];
  let service = 'mail';
  let event = 'delivered';
  function renderCatalogue() {
    for (const tab of document.querySelectorAll('[data-service-tab]')) tab.setAttribute('aria-pressed', String(tab.dataset.serviceTab === service));
    const list = $('#catalogue');
    list.replaceChildren();
    for (const entry of catalogue.filter((e) => e.service === service)) {
      const b = el('button', undefined, { type: 'button', 'data-event': entry.name, 'aria-pressed': String(entry.name === event) });
      b.append(el('span', entry.name, { class: 'name' }), el('span', entry.description, { class: 'desc' }));
      b.addEventListener('click', () => choose(entry.name));
      list.append(b);
    }
  }
  function choose(name) {
    event = name;
    const entry = catalogue.find((e) => e.service === service && e.name === name);
    $('#payload').value = entry ? JSON.stringify(entry.payload, null, 2) : '{}';
    $('#payload-label').textContent = service === 'mail'
      ? 'Payload of ' + name + ' (the body the email service sends)'
      : 'data of ' + name + ' (the envelope id, event, timestamp and tenant_id are added)';
    showErrors($('[data-testid=payload-errors]'), []);
    renderCatalogue();
  }
  for (const tab of document.querySelectorAll('[data-service-tab]')) {
    tab.addEventListener('click', () => { service = tab.dataset.serviceTab; choose(catalogue.find((e) => e.service === service).name); });
  }
  async function loadCatalogue(keep) {
    catalogue = (await call('GET', '/_emulator/catalogue')).events;
    if (keep) renderCatalogue(); else choose(event);
  }
  $('[data-testid=reset-payload]').addEventListener('click', () => loadCatalogue(false));
  $('[data-testid=send-event]').addEventListener('click', async () => {
    const errors = $('[data-testid=payload-errors]');
    let payload;
    try { payload = JSON.parse($('#payload').value); } catch (err) { showErrors(errors, ['Not JSON: ' + err.message]); return; }
    try {
      const data = await call('POST', '/_emulator/events', { service, event, payload });
      showErrors(errors, []);
      notice(data.deliveries.length === 0 ? 'No active ' + service + ' webhook subscribes to ' + event + ': nothing sent.' : 'Sent ' + event + ' to ' + data.deliveries.length + ' webhook(s).');
      if (data.deliveries[0]) select(data.deliveries[0].id);
    } catch (err) {
      showErrors(errors, err.issues.length ? err.issues.map((i) => i.path + ': ' + i.message) : [err.message]);
      notice('Not sent: ' + err.message, true);
    }
    refresh();
  });

  // Add a webhook.
  $('#add-webhook').addEventListener('submit', async (e) => {
    e.preventDefault();
    const errors = $('[data-testid=add-errors]');
    const events = $('#add-events').value.split(',').map((s) => s.trim()).filter(Boolean);
    const secret = $('#add-secret').value;
    try {
      const w = await call('POST', '/_emulator/webhooks', { service: $('#add-service').value, url: $('#add-url').value.trim(), events, secret });
      showErrors(errors, []);
      $('#add-secret').value = '';
      notice('Added ' + w.service + ' webhook ' + w.id + (secret ? ', signed with the secret you gave.' : '. Its secret (shown once): ' + w.secret));
    } catch (err) { showErrors(errors, [err.message]); }
    refresh();
  });

  // Webhooks, deliveries, filters.
  let state = null;
  let fetchedAt = 0;
  function relative(iso) {
    if (!iso || !state) return '';
    const seconds = (Date.parse(iso) - state.now) / 1000 / state.speed;
    return seconds <= 0 ? 'due' : 'in ' + (seconds < 90 ? Math.ceil(seconds) + ' s' : Math.round(seconds / 60) + ' min');
  }
  function timeCell(wallIso, emulatedIso) {
    const td = el('td', undefined, { class: 'time', title: 'wall ' + wallIso + ' · emulated ' + emulatedIso });
    td.append(el('span', isoTime(wallIso) + ' wall'), el('br'), el('span', isoTime(emulatedIso) + ' emu.', { class: 'small muted' }));
    return td;
  }
  function answerNode(a) {
    const span = el('span');
    if (!a) return span;
    span.append(el('span', a.statusCode || 'no answer', { class: a.success ? 'ok-code' : 'error-code' }));
    if (a.errorCode) span.append(' ', el('span', a.errorCode, { class: 'error-code', 'data-testid': 'error-code' }));
    return span;
  }
  function renderWebhooks() {
    const body = $('[data-testid=webhooks] tbody');
    body.replaceChildren();
    if (state.webhooks.length === 0) {
      const tr = el('tr'); tr.append(el('td', 'No webhooks yet: add one with the form, or POST /api/v1/webhooks (email) or /v1/webhooks (CRM).', { colspan: 7, class: 'empty' })); body.append(tr);
    }
    for (const w of state.webhooks) {
      const status = w.service === 'mail' ? w.status : (w.active ? 'active' : 'inactive');
      const tr = el('tr', undefined, { 'data-webhook': w.id });
      const actions = el('td', undefined, { class: 'num' });
      const base = '/_emulator/' + w.service + '/webhooks/' + encodeURIComponent(w.id);
      if (status !== 'active') actions.append(act('Reactivate', base + '/reactivate', () => 'Webhook ' + w.id + ' reactivated.'), ' ');
      actions.append(act('Rotate secret', base + '/rotate-secret', (d) => 'New secret of ' + w.id + ': ' + d.secret));
      const statusCell = el('td'); statusCell.append(badge(status));
      tr.append(el('td', w.service), el('td', w.id, { class: 'id' }), el('td', w.url, { class: 'id' }), el('td', (w.events || []).length > 6 ? 'every event (' + w.events.length + ')' : (w.events || []).join(', ')), statusCell,
        el('td', w.service === 'mail' ? w.consecutiveFailures : '', { class: 'num' }), actions);
      body.append(tr);
    }
  }
  function renderFilters() {
    const select = $('#filter-event');
    const chosen = select.value;
    const names = [...new Set(state.deliveries.map((d) => d.event))].sort();
    if (chosen && !names.includes(chosen)) names.push(chosen);
    select.replaceChildren(el('option', 'all', { value: '' }), ...names.map((n) => el('option', n, { value: n })));
    select.value = chosen;
  }
  function renderDeliveries() {
    renderFilters();
    const f = { service: $('#filter-service').value, event: $('#filter-event').value, status: $('#filter-status').value };
    const shown = state.deliveries.filter((d) => (!f.service || d.service === f.service) && (!f.event || d.event === f.event) && (!f.status || d.status === f.status));
    $('#shown-count').textContent = shown.length + ' of ' + state.deliveries.length + ' shown';
    const rows = $('[data-testid=deliveries] tbody');
    rows.replaceChildren();
    if (shown.length === 0) {
      const tr = el('tr'); tr.append(el('td', state.deliveries.length ? 'No delivery matches the filters.' : 'No deliveries yet: send an event from the editor, or run svc-webhooks trigger.', { colspan: 10, class: 'empty' })); rows.append(tr);
    }
    for (const d of shown) {
      const last = d.attempts[d.attempts.length - 1];
      const tr = el('tr', undefined, { 'data-delivery': d.id, 'data-status': d.status, 'data-service': d.service, 'data-event': d.event });
      if (d.id === selected) tr.classList.add('selected');
      tr.addEventListener('click', () => select(d.id));
      const statusCell = el('td'); statusCell.append(badge(d.status));
      const answer = el('td'); answer.append(answerNode(last));
      const actions = el('td');
      if (d.service === 'mail' && d.status !== 'pending') actions.append(act('Retry', '/_emulator/mail/webhooks/' + encodeURIComponent(d.webhookId) + '/deliveries/' + encodeURIComponent(d.id) + '/retry', (a) => 'Retried ' + d.id + ': ' + (a.statusCode || a.error)));
      tr.append(timeCell(d.createdWallAt, d.createdAt), el('td', d.service), el('td', d.event + (d.test ? ' (test)' : '')), el('td', d.id.slice(0, 8) + '…', { class: 'id short', title: d.id }),
        statusCell, el('td', d.attempts.length, { class: 'num', 'data-testid': 'attempt-count' }), answer,
        el('td', last ? last.durationMs + ' ms' : '', { class: 'num' }), el('td', relative(d.nextAttemptAt), { class: 'num' }), actions);
      rows.append(tr);
    }
  }
  for (const id of ['#filter-service', '#filter-event', '#filter-status']) $(id).addEventListener('change', () => state && renderDeliveries());

  // The inspector: each attempt's request and answer.
  let selected = null;
  function select(id) { selected = id; if (state) renderDeliveries(); loadDetail(); }
  function headersTable(headers) {
    const table = el('table', undefined, { class: 'headers' });
    for (const [name, value] of headers) { const tr = el('tr'); tr.append(el('td', name), el('td', value)); table.append(tr); }
    return table;
  }
  function bodyBlock(body, what) {
    const wrap = el('div');
    if (!body || body.bytes === 0) { wrap.append(el('div', 'no body', { class: 'small muted' })); return wrap; }
    let text = body.text;
    if (!body.truncated) { try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* shown as received */ } }
    wrap.append(el('pre', text, { 'data-testid': what + '-body' }));
    if (body.truncated) wrap.append(el('div', 'cut: the first ' + body.text.length + ' characters of ' + body.bytes + (what === 'response' ? '+' : '') + ' bytes', { class: 'small muted' }));
    return wrap;
  }
  function attemptCard(a) {
    const card = el('div', undefined, { class: 'attempt', 'data-attempt': a.attempt });
    const summary = el('div', undefined, { class: 'summary' });
    summary.append(el('strong', '#' + a.attempt + ' ' + a.kind), el('span', 'wall ' + isoTime(a.wallAt), { title: a.wallAt }),
      el('span', 'emulated ' + isoTime(a.attemptedAt), { class: 'muted', title: a.attemptedAt }), answerNode(a), el('span', a.durationMs + ' ms', { class: 'muted' }));
    // The network error or the redirect not followed; a status alone says the rest.
    if (!a.success && a.error && (a.statusCode === 0 || (a.statusCode >= 300 && a.statusCode < 400))) summary.append(el('span', a.error, { class: 'error-code' }));
    const x = a.exchange;
    const request = el('div', undefined, { 'data-testid': 'request' });
    const response = el('div', undefined, { 'data-testid': 'response' });
    request.append(el('h3', 'Request'));
    response.append(el('h3', 'Response'));
    if (!x) {
      request.append(el('div', 'Not kept (the emulator keeps the 500 most recent attempts).', { class: 'small muted' }));
    } else {
      request.append(el('div', x.request.method + ' ' + x.request.url, { class: 'mono small' }), headersTable(x.request.headers), bodyBlock(x.request.body, 'request'));
      if (x.response) {
        const status = el('div', undefined, { class: 'mono small' });
        status.append(el('span', 'HTTP ' + x.response.status, { class: a.success ? 'ok-code' : 'error-code', 'data-testid': 'response-status' }));
        if (a.errorCode) status.append(' ', el('span', a.errorCode, { class: 'error-code', 'data-testid': 'error-code' }));
        response.append(status, headersTable(x.response.headers), bodyBlock(x.response.body, 'response'));
      } else {
        response.append(el('div', 'No answer: ' + (x.error || a.error), { class: 'error-code small' }));
      }
    }
    const exchange = el('div', undefined, { class: 'exchange' });
    exchange.append(request, response);
    card.append(summary, exchange);
    return card;
  }
  let detailSeq = 0;
  async function loadDetail() {
    if (!selected) return;
    const seq = ++detailSeq;
    let d;
    try { d = await call('GET', '/_emulator/deliveries/' + encodeURIComponent(selected)); } catch (err) { $('#inspector').hidden = true; return; }
    if (seq !== detailSeq) return;
    $('#inspector').hidden = false;
    $('#inspector-id').textContent = d.id;
    $('#inspector-meta').textContent = d.service + ' ' + d.event + (d.test ? ' (test)' : '') + ' to webhook ' + d.webhookId + ' · ' + d.status + ' · created ' + isoTime(d.createdWallAt) + ' wall, ' + isoTime(d.createdAt) + ' emulated';
    $('#inspector-attempts').replaceChildren(...d.attempts.map(attemptCard));
  }

  function renderClocks() {
    if (!state) return;
    const emulated = state.now + (Date.now() - fetchedAt) * state.speed;
    $('#clocks').textContent = 'wall ' + time(Date.now()) + ' · emulated ' + time(emulated) + (state.speed === 1 ? '' : ' (' + state.speed + '× speed)');
  }
  // One read at a time; a change during a read asks for one more read after it.
  let inFlight = false;
  let again = false;
  async function refresh() {
    if (inFlight) { again = true; return; }
    inFlight = true;
    try {
      state = await call('GET', '/_emulator/state'); fetchedAt = Date.now();
      renderWebhooks(); renderDeliveries(); renderClocks(); loadDetail();
    } catch (e) { $('#live').textContent = 'disconnected'; }
    inFlight = false;
    if (again) { again = false; refresh(); }
  }
  const stream = new EventSource('/_emulator/stream');
  stream.addEventListener('open', () => { $('#live').textContent = 'live'; });
  stream.addEventListener('change', refresh);
  stream.addEventListener('error', () => { $('#live').textContent = 'reconnecting…'; });
  setInterval(refresh, 5000);
  setInterval(renderClocks, 1000);
  loadCatalogue(false).catch((e) => notice('Catalogue failed: ' + e.message, true));
  refresh();
})();
`;
