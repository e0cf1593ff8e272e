/**
 * The inbox page's JSON API: a bounded page of rows under filters, one row with its headers and body,
 * and re-drive (one row, or the filtered set with `confirm: true`). Answers are web `Response`s;
 * every value of a row is data, sent as JSON and shown by the page as text.
 */
import type { HandoffRunner } from '../../handoff/job/types.js';
import type { Inbox } from '../../inbox/inbox.js';
import { INBOX_STATUSES, type InboxFilter, type InboxStatus } from '../../inbox/types.js';
import { jsonText } from '../visible-text.js';

/** Rows per page the page may ask for (the library allows 500; a browser table needs fewer). */
export const PAGE_MAX_ROWS = 100;
/** Longest event name or ordering key a filter may hold (ordering keys are bounded at 200). */
const MAX_FILTER_CHARS = 256;

/** A JSON answer; C1 and bidi controls escaped like every JSON the CLI prints. */
export function jsonResponse(status: number, value: unknown): Response {
  return new Response(jsonText(value), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
  });
}

/** A refusal: `{ error: { code, message } }`. */
export function refuse(status: number, code: string, message: string): Response {
  return jsonResponse(status, { error: { code, message } });
}

/** Bad input from the page (or anything else calling the API): answered 400, never thrown further. */
class BadRequest extends Error {}

function text(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || value.length > MAX_FILTER_CHARS)
    throw new BadRequest(`\`${name}\` must be text of at most ${MAX_FILTER_CHARS} characters.`);
  // No stored service or event holds U+0000, and PostgreSQL refuses it in a text parameter.
  if (value.includes('\u0000')) throw new BadRequest(`\`${name}\` must not contain U+0000.`);
  return value;
}

function whole(value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max)
    throw new BadRequest(`\`${name}\` must be a whole number from ${min} to ${max}.`);
  return n;
}

/** The filter in a query string or a JSON object: status, service, event, key. */
function filterOf(get: (name: string) => unknown): InboxFilter {
  const status = text(get('status'), 'status');
  if (status !== undefined && !INBOX_STATUSES.includes(status as InboxStatus))
    throw new BadRequest(`\`status\` must be one of ${INBOX_STATUSES.join(', ')}.`);
  const service = text(get('service'), 'service');
  if (service !== undefined && service !== 'mail' && service !== 'crm')
    throw new BadRequest('`service` must be mail or crm.');
  const event = text(get('event'), 'event');
  const orderingKey = text(get('key'), 'key');
  return {
    ...(status !== undefined ? { status: status as InboxStatus } : {}),
    ...(service !== undefined ? { service } : {}),
    ...(event !== undefined ? { event } : {}),
    ...(orderingKey !== undefined ? { orderingKey } : {}),
  };
}

/** `GET /api/rows?status=&service=&event=&key=&limit=&before=`: newest first. */
async function listRows(inbox: Inbox, query: URLSearchParams): Promise<Response> {
  const get = (name: string) => query.get(name) ?? undefined;
  const filter = filterOf(get);
  const limit = whole(get('limit'), 'limit', 1, PAGE_MAX_ROWS) ?? 25;
  const before = whole(get('before'), 'before', 1, Number.MAX_SAFE_INTEGER);
  const page = await inbox.list({ ...filter, limit, ...(before !== undefined ? { before } : {}) });
  return jsonResponse(200, page);
}

/** `GET /api/rows/:id`: the row, its headers, and its body as text (the page pretty-prints JSON). */
async function showRow(inbox: Inbox, id: string): Promise<Response> {
  const rowId = whole(id, 'id', 1, Number.MAX_SAFE_INTEGER)!;
  const row = await inbox.show(rowId);
  if (!row) return refuse(404, 'row_not_found', `No row ${rowId} in the inbox.`);
  const { body, ...rest } = row;
  return jsonResponse(200, {
    row: { ...rest, body: new TextDecoder().decode(body), bodyBytes: body.byteLength },
  });
}

/**
 * Re-drives `target`; through each of `receivers` when `inbox serve --receiver` loaded the app's
 * (their quarantined rows move only once they parse: docs/inbox.md "When the payload changes").
 */
async function redriveThrough(
  inbox: Inbox,
  target: Parameters<Inbox['redrive']>[0],
  receivers: readonly HandoffRunner[],
): Promise<number> {
  if (receivers.length === 0) return inbox.redrive(target);
  let moved = 0;
  for (const receiver of receivers) moved += await inbox.redrive(target, { receiver });
  return moved;
}

/** `POST /api/redrive` with `{ id }` or `{ filter, confirm: true }`. */
async function redrive(inbox: Inbox, input: unknown, receivers: readonly HandoffRunner[]): Promise<Response> {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new BadRequest('Send { "id": 12 } or { "filter": { … }, "confirm": true }.');
  const body = input as Record<string, unknown>;
  if (body.id !== undefined) {
    const id = whole(body.id, 'id', 1, Number.MAX_SAFE_INTEGER)!;
    return jsonResponse(200, { moved: await redriveThrough(inbox, { id }, receivers) });
  }
  const raw = body.filter;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new BadRequest('Send { "id": 12 } or { "filter": { … }, "confirm": true }.');
  const filter = filterOf((name) => (raw as Record<string, unknown>)[name]);
  // As on the command line: a re-drive names its rows; "everything" is never one click.
  if (Object.keys(filter).length === 0)
    throw new BadRequest('Name the rows: a filter needs a status, service, event or key.');
  if (body.confirm !== true) throw new BadRequest('A filtered re-drive needs "confirm": true.');
  if (filter.status === 'handled' || filter.status === 'processing' || filter.status === 'received')
    throw new BadRequest(`Rows in status ${filter.status} are not re-driven.`);
  return jsonResponse(200, { moved: await redriveThrough(inbox, filter, receivers) });
}

/** The API route for `method` and `path`, or undefined; `BadRequest` becomes a 400. */
export async function runApiRoute(
  inbox: Inbox,
  method: string,
  url: URL,
  body: unknown,
  receivers: readonly HandoffRunner[] = [],
): Promise<Response | undefined> {
  try {
    const row = /^\/api\/rows\/([^/]+)$/.exec(url.pathname);
    if (url.pathname === '/api/rows')
      return method === 'GET' ? await listRows(inbox, url.searchParams) : notAllowed('GET');
    if (row) return method === 'GET' ? await showRow(inbox, row[1]!) : notAllowed('GET');
    if (url.pathname === '/api/redrive')
      return method === 'POST' ? await redrive(inbox, body, receivers) : notAllowed('POST');
    return undefined;
  } catch (error) {
    if (error instanceof BadRequest) return refuse(400, 'invalid_request', error.message);
    throw error;
  }
}

function notAllowed(allow: string): Response {
  const response = refuse(405, 'method_not_allowed', `Use ${allow}.`);
  response.headers.set('Allow', allow);
  return response;
}
