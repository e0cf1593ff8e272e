/**
 * The inbox page's script: filters, bounded pages (newest first), a row's fields, last error,
 * headers and body, and re-drive with a confirmation. Every value of a row reaches the page through
 * `textContent` or a text node, never as HTML, with control and bidi characters shown as escapes
 * (`\u202e`) so a sender cannot reorder or hide what the page shows. Writes are JSON POSTs.
 */
import { UNSAFE_CHARS } from '../../shared/control-chars.js';
import { PAGE_MAX_ROWS } from './routes.js';

export const PAGE_SCRIPT = `
(() => {
  'use strict';
  const CHARS = ${JSON.stringify(UNSAFE_CHARS)};
  const PAGE = ${Math.min(25, PAGE_MAX_ROWS)};
  const REDRIVABLE = ['failed', 'dead', 'quarantined', 'superseded'];
  const ONE_LINE = new RegExp('[\\\\t\\\\n\\\\r' + CHARS + ']', 'g');
  const BLOCK = new RegExp('[\\\\r' + CHARS + ']', 'g');
  const NAMED = { '\\n': '\\\\n', '\\r': '\\\\r', '\\t': '\\\\t' };
  const esc = (c) => NAMED[c] || '\\\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');
  const shown = (v) => String(v == null ? '' : v).replace(ONE_LINE, esc);
  const shownBlock = (v) => String(v == null ? '' : v).replace(BLOCK, esc);
  const $ = (id) => document.getElementById(id);
  // A malformed row's time column may be no time a Date holds: shown as its number.
  const iso = (ms) => (Number.isNaN(new Date(ms).getTime()) ? null : new Date(ms).toISOString());
  const short = (ms) => (iso(ms) === null ? String(ms) : iso(ms).slice(5, 19).replace('T', ' '));
  const time = (ms) => (ms == null ? '' : iso(ms) === null ? String(ms) : iso(ms).replace('T', ' ').replace('Z', ''));

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === 'class') node.className = value;
      else node.setAttribute(name, value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  let filter = {};
  let before;
  const newer = [];
  let selected;
  let pending;
  /** The latest list request: an earlier one answering late must not replace what it shows. */
  let loading = 0;

  async function api(path, init) {
    const response = await fetch(path, init);
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error((body.error && body.error.message) || 'HTTP ' + response.status);
    return body;
  }
  const post = (path, value) =>
    api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(value) });

  function notice(text, bad) {
    const node = $('notice');
    node.textContent = shown(text);
    node.className = bad ? 'bad' : '';
  }

  function readFilter() {
    const next = {};
    for (const name of ['status', 'service', 'event', 'key']) {
      const value = $('filter-' + name).value.trim();
      if (value) next[name] = value;
    }
    return next;
  }

  function describe(f) {
    const parts = Object.entries(f).map(([k, v]) => k + ' = ' + v);
    return parts.length ? parts.join(', ') : 'no filter';
  }

  async function load() {
    const query = new URLSearchParams(filter);
    query.set('limit', String(PAGE));
    if (before !== undefined) query.set('before', String(before));
    const mine = ++loading;
    try {
      const page = await api('/api/rows?' + query);
      if (mine === loading) render(page);
    } catch (error) {
      notice(error.message, true);
    }
  }

  function render(page) {
    const body = $('rows').tBodies[0];
    body.replaceChildren();
    for (const row of page.rows) {
      const tr = el('tr', { 'data-row': String(row.id) },
        el('td', { class: 'num' }, String(row.id)),
        el('td', {}, el('span', { class: 'badge ' + row.status }, row.status)),
        el('td', {}, shown(row.service)),
        el('td', { class: 'mono event' }, shown(row.event)),
        el('td', { class: 'mono key' }, shown(row.orderingKey)),
        el('td', { class: 'num' }, String(row.attempts)),
        el('td', { class: 'num', title: time(row.receivedAt) }, short(row.receivedAt)),
        el('td', { class: 'error-code', title: shown(row.malformed) }, shown(row.malformed === undefined ? row.lastErrorCode : 'malformed')));
      if (row.id === selected) tr.className = 'selected';
      tr.addEventListener('click', () => void open(row.id));
      body.append(tr);
    }
    if (page.rows.length === 0) body.append(el('tr', {}, el('td', { colspan: '8', class: 'empty' }, 'No rows match.')));
    $('older').disabled = page.next === undefined;
    $('older').dataset.next = page.next === undefined ? '' : String(page.next);
    $('newer').disabled = newer.length === 0;
    $('newest').disabled = before === undefined;
    $('page-label').textContent = 'page ' + (newer.length + 1) + ' · ' + page.rows.length + ' rows · ' + describe(filter);
    $('redrive-filter').disabled = Object.keys(filter).length === 0;
  }

  async function open(id) {
    selected = id;
    for (const tr of $('rows').querySelectorAll('tr[data-row]')) tr.className = tr.dataset.row === String(id) ? 'selected' : '';
    try {
      const { row } = await api('/api/rows/' + id);
      show(row);
    } catch (error) {
      notice(error.message, true);
    }
  }

  function show(row) {
    $('detail').hidden = false;
    $('detail-id').textContent = String(row.id);
    const fields = [
      ['status', row.status], ['service', row.service], ['event', row.event], ['delivery id', row.deliveryId],
      ['dedup key', row.dedupKey], ['ordering key', row.orderingKey], ['event at', time(row.eventAt)],
      ['received at', time(row.receivedAt)], ['handled at', time(row.handledAt)], ['attempts', row.attempts],
      ['run at', time(row.runAt)], ['lease until', time(row.leaseUntil)], ['fence', row.fence],
      ['malformed', row.malformed === undefined ? null : row.malformed],
    ];
    $('detail-fields').tBodies[0].replaceChildren(
      ...fields.filter(([, v]) => v !== null && v !== '').map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', { class: 'mono' }, shown(v)))));
    const failed = row.lastErrorCode !== null || row.lastErrorMessage !== null;
    $('detail-error').hidden = !failed;
    $('detail-error-code').textContent = shown(row.lastErrorCode);
    $('detail-error-message').textContent = shown(row.lastErrorMessage);
    $('detail-headers').tBodies[0].replaceChildren(
      ...Object.entries(row.headers).map(([k, v]) => el('tr', {}, el('td', {}, shown(k)), el('td', {}, shown(v)))));
    let body = row.body;
    try {
      body = JSON.stringify(JSON.parse(row.body), null, 2);
      $('detail-body-kind').textContent = 'JSON, ' + row.bodyBytes + ' bytes';
    } catch {
      $('detail-body-kind').textContent = 'text, ' + row.bodyBytes + ' bytes';
    }
    $('detail-body').textContent = shownBlock(body);
    $('redrive-row').disabled = !REDRIVABLE.includes(row.status);
    $('redrive-row').dataset.status = row.status;
  }

  function ask(text, action) {
    pending = action;
    $('confirm-text').textContent = shown(text);
    $('confirm').hidden = false;
    $('confirm-yes').focus();
  }

  async function confirmed() {
    const action = pending;
    pending = undefined;
    $('confirm').hidden = true;
    if (!action) return;
    try {
      const { moved } = await action();
      notice(moved + (moved === 1 ? ' row' : ' rows') + ' moved back to received; the worker runs ' + (moved === 1 ? 'it' : 'them') + ' again.');
    } catch (error) {
      notice(error.message, true);
    }
    await load();
    if (selected !== undefined) await open(selected);
  }

  function apply() {
    filter = readFilter();
    before = undefined;
    newer.length = 0;
    void load();
  }

  $('filters').addEventListener('submit', (event) => { event.preventDefault(); apply(); });
  for (const name of ['status', 'service']) $('filter-' + name).addEventListener('change', apply);
  $('refresh').addEventListener('click', () => void load());
  $('older').addEventListener('click', () => { newer.push(before); before = Number($('older').dataset.next); void load(); });
  $('newer').addEventListener('click', () => { before = newer.pop(); void load(); });
  $('newest').addEventListener('click', () => { before = undefined; newer.length = 0; void load(); });
  $('redrive-row').addEventListener('click', () => {
    const id = selected;
    ask('Re-drive row ' + id + ' (' + $('redrive-row').dataset.status + ')? It runs again with its attempts reset.',
      () => post('/api/redrive', { id }));
  });
  $('redrive-filter').addEventListener('click', () => {
    const f = { ...filter };
    ask('Re-drive every failed, dead, quarantined or superseded row where ' + describe(f) + '?',
      () => post('/api/redrive', { filter: f, confirm: true }));
  });
  $('confirm-yes').addEventListener('click', () => void confirmed());
  $('confirm-no').addEventListener('click', () => { pending = undefined; $('confirm').hidden = true; });
  api('/api/target').then((t) => { $('target').textContent = shown(t.dialect + ' · ' + t.label); }, () => {});
  void load();
})();
`;
