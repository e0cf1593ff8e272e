/**
 * How `svc-webhooks inbox` prints rows: a table, one row's fields, or JSON lines. Every value of a
 * row (event, ids, keys, errors, headers, body) is sender-controlled: shown through {@link visible}.
 */
import type { InboxRow, InboxRowDetail, InboxStats } from '../inbox/types.js';
import type { Output } from './output.js';
import { jsonText, visible } from './visible-text.js';

/** An epoch-ms column as ISO 8601; a malformed one (no time a `Date` holds) as its number. */
const time = (ms: number | null): string => {
  if (ms === null) return '';
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
};

/** One row as one JSON line on stdout (`--json` of `inbox list`). */
export function printJsonLine(row: InboxRow): void {
  process.stdout.write(`${jsonText(row)}\n`);
}

const COLUMNS: [string, (row: InboxRow) => string][] = [
  ['ID', (row) => String(row.id)],
  ['STATUS', (row) => row.status],
  ['SERVICE', (row) => row.service],
  ['EVENT', (row) => row.event],
  ['ATTEMPTS', (row) => String(row.attempts)],
  ['RECEIVED', (row) => time(row.receivedAt)],
  ['DELIVERY', (row) => row.deliveryId],
  ['KEY', (row) => row.orderingKey ?? ''],
  ['ERROR', (row) => row.lastErrorCode ?? ''],
];

/** Cuts a cell to `max` characters (after escaping, so an escape is never split into raw bytes). */
const cell = (text: string, max = 40): string => {
  const shown = visible(text);
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
};

/** The mark of a malformed row, shown only on pages that have one. */
const MALFORMED: [string, (row: InboxRow) => string] = ['MALFORMED', (row) => row.malformed ?? ''];

/** A quarantined row's schema issues (its last error's message), shown only on pages that have one. */
const ISSUES: [string, (row: InboxRow) => string, number] = [
  'ISSUES',
  (row) => (row.status === 'quarantined' ? (row.lastErrorMessage ?? '') : ''),
  100,
];

/**
 * Rows as an aligned table (or a note that there are none); quarantined rows give their issues, and
 * malformed rows say why, in last columns shown only when the page has such a row.
 */
export function printTable(out: Output, rows: readonly InboxRow[]): void {
  if (rows.length === 0) {
    out.note('no rows');
    return;
  }
  const columns: Column<InboxRow>[] = [...COLUMNS];
  if (rows.some((row) => row.status === 'quarantined')) columns.push(ISSUES);
  if (rows.some((row) => row.malformed !== undefined)) columns.push(MALFORMED);
  printColumns(out, columns, rows);
}

/** A table's column: its name, its cell of a value, and the cell's width at most (default 40). */
type Column<T> = [string, (value: T) => string, number?];

type Drift = InboxStats['drift'][number];

/** `inbox drift`: a path `""` is the event itself, one this version does not know. */
const DRIFT_COLUMNS: Column<Drift>[] = [
  ['SERVICE', (drift) => drift.service],
  ['EVENT', (drift) => drift.event, 64],
  ['PATH', (drift) => (drift.path === '' ? '(unknown event)' : drift.path), 64],
  ['DELIVERIES', (drift) => String(drift.deliveries)],
  ['FIRST SEEN', (drift) => time(drift.firstSeenAt)],
  ['LAST SEEN', (drift) => time(drift.lastSeenAt)],
];

/** The payload drift of `inbox.stats()` as an aligned table (or a note that there is none). */
export function printDrift(out: Output, drift: readonly Drift[]): void {
  if (drift.length === 0) {
    out.note('no payload drift: every delivery matched the schemas of this version');
    return;
  }
  printColumns(out, DRIFT_COLUMNS, drift);
}

/** Values as an aligned table under bold column names, each cell escaped and cut to its width. */
function printColumns<T>(out: Output, columns: readonly Column<T>[], values: readonly T[]): void {
  const cells = values.map((row) => columns.map(([, value, max]) => cell(value(row), max)));
  const widths = columns.map(([name], i) => Math.max(name.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  out.line(out.color.bold(line(columns.map(([name]) => name))));
  for (const c of cells) out.line(line(c));
}

/** One row with its body: text, or one JSON document with `--json`. */
export function printRow(out: Output, row: InboxRowDetail): void {
  const body = new TextDecoder().decode(row.body);
  if (out.json) {
    out.result({ ok: true, row: { ...row, body } });
    return;
  }
  const fields: [string, string | number | null][] = [
    ['id', row.id],
    ['status', row.status],
    ['service', row.service],
    ['event', row.event],
    ['delivery id', row.deliveryId],
    ['dedup key', row.dedupKey],
    ['ordering key', row.orderingKey],
    ['event at', time(row.eventAt)],
    ['received at', time(row.receivedAt)],
    ['handled at', time(row.handledAt)],
    ['attempts', row.attempts],
    ['run at', time(row.runAt)],
    ['lease until', time(row.leaseUntil)],
    ['fence', row.fence],
  ];
  for (const [name, value] of fields)
    if (value !== null && value !== '') out.line(`${name.padEnd(13)} ${visible(value)}`);
  if (row.malformed !== undefined)
    out.line(`${out.color.red('malformed'.padEnd(13))} ${visible(row.malformed)}`);
  if (row.lastErrorCode !== null || row.lastErrorMessage !== null)
    out.line(
      `${out.color.red('last error'.padEnd(13))} ${visible(row.lastErrorCode ?? '')}: ${visible(row.lastErrorMessage ?? '')}`,
    );
  out.line();
  out.line(out.color.dim('headers'));
  for (const [name, value] of Object.entries(row.headers)) out.line(`  ${visible(name)}: ${visible(value)}`);
  out.line();
  out.line(out.color.dim(`body (${row.body.byteLength} bytes)`));
  out.line(visible(body));
}
