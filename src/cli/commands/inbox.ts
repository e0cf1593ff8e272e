/**
 * `svc-webhooks inbox list|show|redrive|purge|drift|serve`: the database inbox's library functions from the
 * shell, against a PostgreSQL URL or a SQLite file. Every value of a row came from a sender, so it is
 * printed escaped.
 */
import type { Command } from 'commander';
import type { InboxFilter } from '../../inbox/types.js';
import { INBOX_STATUSES, type InboxStatus } from '../../inbox/types.js';
import { parseService } from '../events.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import { printDrift, printJsonLine, printRow, printTable } from '../inbox-output.js';
import { DEFAULT_INBOX_PAGE_PORT, serveInbox } from '../inbox-page/serve.js';
import { databaseError, type OpenInbox, openInbox, type TargetOptions } from '../inbox-target.js';
import { type LoadedReceivers, loadReceivers } from '../load-receiver.js';
import type { Output } from '../output.js';
import { runAction } from '../run-action.js';

interface FilterOptions extends TargetOptions {
  status?: string;
  service?: string;
  event?: string;
  key?: string;
}

function withTarget(command: Command, json = 'print one JSON document instead of text'): Command {
  return command
    .option('--json', json)
    .option('--database <url>', 'a PostgreSQL inbox: postgres://user:password@host/db (needs pg)')
    .option('--file <path>', 'a SQLite inbox: the database file')
    .option('--table <name>', 'the inbox table (default webhook_inbox)');
}

function withFilter(command: Command): Command {
  return command
    .option('--status <status>', INBOX_STATUSES.join(', '))
    .option('--service <service>', 'mail or crm')
    .option('--event <event>', 'an event name (bounced, deal.won)')
    .option('--key <key>', 'an ordering key (crm:deal:…, mail:message:…)');
}

function filterOf(options: FilterOptions): InboxFilter {
  if (options.status !== undefined && !INBOX_STATUSES.includes(options.status as InboxStatus))
    throw new CliError(`Unknown status "${options.status}": use one of ${INBOX_STATUSES.join(', ')}.`);
  return {
    ...(options.status !== undefined ? { status: options.status as InboxStatus } : {}),
    ...(options.service !== undefined ? { service: parseService(options.service) } : {}),
    ...(options.event !== undefined ? { event: options.event } : {}),
    ...(options.key !== undefined ? { orderingKey: options.key } : {}),
  };
}

function wholeNumber(value: string, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
    throw new CliError(`${what} must be a whole number from ${min} to ${max} (got "${value}").`);
  return n;
}

/** Opens the target, runs `work`, closes it; database failures become CLI errors. */
async function withInbox(options: TargetOptions, work: (target: OpenInbox) => Promise<ExitCode>) {
  const target = await openInbox(options);
  try {
    return await work(target);
  } catch (error) {
    throw databaseError(error, target, options);
  } finally {
    await target.close().catch(() => {});
  }
}

async function list(out: Output, options: FilterOptions & { limit: string; before?: string }) {
  const filter = filterOf(options);
  const limit = wholeNumber(options.limit, '--limit', 1, 500);
  const before = options.before === undefined ? undefined : wholeNumber(options.before, '--before', 1);
  return withInbox(options, async ({ inbox }) => {
    const page = await inbox.list({ ...filter, limit, ...(before !== undefined ? { before } : {}) });
    if (out.json) for (const row of page.rows) printJsonLine(row);
    else printTable(out, page.rows);
    if (page.next !== undefined) out.note(`more rows: add --before ${page.next}`);
    return EXIT.ok;
  });
}

async function show(out: Output, id: string, options: TargetOptions) {
  const rowId = wholeNumber(id, 'The id', 1);
  return withInbox(options, async ({ inbox, label }) => {
    const row = await inbox.show(rowId);
    if (!row) throw new CliError(`No row ${rowId} in the inbox at ${label}.`, EXIT.failed, 'row_not_found');
    printRow(out, row);
    return EXIT.ok;
  });
}

async function redrive(out: Output, ids: string[], options: FilterOptions & { receiver?: string[] }) {
  const filter = filterOf(options);
  const rowIds = ids.map((id) => wholeNumber(id, 'An id', 1));
  const filtered = Object.keys(filter).length > 0;
  if (rowIds.length > 0 && filtered)
    throw new CliError('Re-drive by ids or by a filter, not both.', EXIT.usage, 'usage');
  if (rowIds.length === 0 && !filtered)
    throw new CliError(
      'Name the rows to re-drive.',
      EXIT.usage,
      'usage',
      'Pass ids (inbox redrive 12 13) or a filter (--status dead --event deal.won).',
    );
  const loaded = options.receiver?.length ? await loadReceivers(options.receiver) : undefined;
  try {
    return await withInbox(options, async ({ inbox }) => {
      const targets = filtered ? [filter] : [...new Set(rowIds)].map((id) => ({ id }));
      // With the app's receivers: each quarantined row of their services checked by its own first.
      const through = loaded ? loaded.receivers.map((receiver) => ({ receiver })) : [undefined];
      let moved = 0;
      for (const target of targets)
        for (const redriveOptions of through) moved += await inbox.redrive(target, redriveOptions);
      const kept = loaded ? await stillQuarantined(inbox, filtered ? filter : undefined, rowIds, loaded) : 0;
      if (out.json) out.result({ ok: true, moved, ...(loaded ? { quarantined: kept } : {}) });
      else {
        out.line(`${moved} row${moved === 1 ? '' : 's'} moved back to received; the worker runs them again.`);
        if (kept > 0)
          out.line(
            `${kept} row${kept === 1 ? '' : 's'} still fail${kept === 1 ? 's' : ''} with this receiver and stay${kept === 1 ? 's' : ''} quarantined: inbox list --status quarantined shows the issues.`,
          );
      }
      return EXIT.ok;
    });
  } finally {
    await loaded?.close();
  }
}

/** How many rows of the re-drive's target (of the receivers' services) are still quarantined. */
async function stillQuarantined(
  inbox: OpenInbox['inbox'],
  filter: InboxFilter | undefined,
  ids: number[],
  loaded: LoadedReceivers,
): Promise<number> {
  const services = new Set(loaded.receivers.map((r) => r.service));
  if (filter === undefined) {
    let kept = 0;
    for (const id of new Set(ids)) {
      const row = await inbox.show(id);
      if (row?.status === 'quarantined' && services.has(row.service)) kept++;
    }
    return kept;
  }
  let kept = 0;
  let before: number | undefined;
  do {
    const page = await inbox.list({
      ...filter,
      status: 'quarantined',
      limit: 500,
      ...(before ? { before } : {}),
    });
    kept += page.rows.filter((row) => services.has(row.service)).length;
    before = page.next;
  } while (before !== undefined);
  return kept;
}

async function purge(out: Output, options: TargetOptions & { olderThan: string }) {
  const days = wholeNumber(options.olderThan, '--older-than', 0, 36_500);
  return withInbox(options, async ({ inbox }) => {
    const removed = await inbox.purge({ olderThanDays: days });
    if (out.json) out.result({ ok: true, removed, olderThanDays: days });
    else
      out.line(
        `${removed} row${removed === 1 ? '' : 's'} removed (handled or superseded more than ${days} days ago).`,
      );
    return EXIT.ok;
  });
}

async function drift(out: Output, options: TargetOptions & { service?: string }) {
  const service = options.service === undefined ? undefined : parseService(options.service);
  return withInbox(options, async ({ inbox }) => {
    const counts = (await inbox.stats()).drift.filter((d) => service === undefined || d.service === service);
    if (out.json) out.result({ ok: true, drift: counts });
    else printDrift(out, counts);
    return EXIT.ok;
  });
}

/** A repeatable option's values. */
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Registers `inbox` and its subcommands. */
export function inboxCommand(program: Command): void {
  const inbox = program
    .command('inbox')
    .description(
      'look at the database inbox: list and show rows, re-drive them, purge handled ones, or serve a page',
    );
  withFilter(withTarget(inbox.command('list'), 'print one JSON object per row, a line each'))
    .description('rows matching the filters, newest first (a table, or one JSON object per line)')
    .option('--limit <n>', 'rows per page, 1 to 500', '50')
    .option('--before <id>', 'the next page: rows with an id below this one')
    .action(runAction(list as never));
  withTarget(inbox.command('show'))
    .description('one row: its fields, last error, headers and body (escaped)')
    .argument('<id>', 'the row id')
    .action(runAction(show as never));
  withFilter(withTarget(inbox.command('redrive')))
    .description('move failed, dead, quarantined or superseded rows back to received, by id or filter')
    .argument('[ids...]', 'row ids')
    .option(
      '--receiver <module>',
      "a module exporting your app's receiver (with its repair): quarantined rows of its service move only if it now parses them (repeat for mail and crm)",
      collect,
    )
    .action(runAction(redrive as never));
  withTarget(inbox.command('purge'))
    .description('delete handled and superseded rows handled more than N days ago')
    .option('--older-than <days>', 'days', '90')
    .action(runAction(purge as never));
  withTarget(inbox.command('drift'))
    .description(
      'payload fields and events this version does not know, by service, event and path (never values)',
    )
    .option('--service <service>', 'mail or crm')
    .action(runAction(drift as never));
  withTarget(inbox.command('serve'), 'print one JSON line (where it listens) instead of text')
    .description('a page on 127.0.0.1 to filter rows, read one (headers, body, last error) and re-drive')
    .option('--port <port>', 'the port (0 picks a free one)', String(DEFAULT_INBOX_PAGE_PORT))
    .option(
      '--receiver <module>',
      "re-drive through your app's receiver, as inbox redrive --receiver does",
      collect,
    )
    .action(runAction(serveInbox as never));
}
