/**
 * Where `svc-webhooks inbox` looks: a PostgreSQL URL (`--database`, through `pg`, loaded only then)
 * or a SQLite file (`--file`), or `SVC_WEBHOOKS_INBOX_DATABASE`. A URL's password never reaches a
 * message: every error about the target names it masked.
 */
import { existsSync, statSync } from 'node:fs';
import { createPostgresStore } from '../dedup/postgres.js';
import { createSqliteStore } from '../dedup/sqlite.js';
import type { DedupStore } from '../dedup/types.js';
import type { Inbox } from '../inbox/inbox.js';
import { createPostgresInbox } from '../inbox/postgres-inbox.js';
import { createSqliteInbox } from '../inbox/sqlite-inbox.js';
import { isWebhookError } from '../shared/errors.js';
import { CliError, EXIT } from './exit-codes.js';
import { loadPeer } from './load-peer.js';

/** The variable read when neither `--database` nor `--file` is given. */
export const INBOX_ENV = 'SVC_WEBHOOKS_INBOX_DATABASE';

/** The target options every `inbox` subcommand takes. */
export interface TargetOptions {
  database?: string;
  file?: string;
  table?: string;
}

/** An open inbox, how to name its target in messages, and how to let go of it. */
export interface OpenInbox {
  inbox: Inbox;
  /** The URL with its password masked, or the file's path. */
  label: string;
  /** The PostgreSQL URL (to scrub its password from a driver's messages); empty for a file. */
  url: string;
  /** A dedup store in the same database (`reconcile` takes turns there), created on first call. */
  lock(): DedupStore;
  close(): Promise<void>;
}

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/** `url` with the password (and anything that looks like one) replaced by `***`. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    // Not parseable: hide whatever sits between `user:` and the last `@` of the authority.
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^/]*@/i, '$1***@');
  }
}

/** `text` with every occurrence of the URL's password replaced, for messages a driver built. */
function scrub(text: string, url: string): string {
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    password = /^[a-z][a-z0-9+.-]*:\/\/[^:/@]*:([^/]*)@/i.exec(url)?.[1] ?? '';
  }
  return password.length > 0 ? text.split(password).join('***') : text;
}

interface PgModule {
  Pool: new (
    config: Record<string, unknown>,
  ) => {
    query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
    on(event: 'error', listener: () => void): void;
    end(): Promise<void>;
  };
}

/** `pg`, an optional peer the bin loads only when a URL asks for it. */
const loadPg = () => loadPeer<PgModule>('pg', 'A PostgreSQL inbox needs the `pg` driver');

async function openPostgres(url: string, table: string | undefined): Promise<OpenInbox> {
  const label = maskUrl(url);
  try {
    new URL(url);
  } catch {
    throw new CliError(`--database ${label} is not a valid URL.`, EXIT.usage, 'database_url_invalid');
  }
  const pg = await loadPg();
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5_000 });
  pool.on('error', () => {}); // an idle connection's failure surfaces on the next query
  const inbox = createPostgresInbox({ client: pool, callTimeoutMs: 10_000, ...(table ? { table } : {}) });
  let store: DedupStore | undefined;
  const lock = () =>
    (store ??= createPostgresStore({ client: pool, createTable: true, callTimeoutMs: 10_000 }));
  return { inbox, label, url, lock, close: () => pool.end() };
}

function openFile(path: string, table: string | undefined): OpenInbox {
  // Never create a database: a mistyped path would otherwise show an empty inbox.
  if (!existsSync(path) || !statSync(path).isFile())
    throw new CliError(`No SQLite file at ${path}.`, EXIT.usage, 'file_missing');
  const inbox = createSqliteInbox({ path, callTimeoutMs: 10_000, ...(table ? { table } : {}) });
  let store: (DedupStore & { close(): Promise<void> }) | undefined;
  const lock = () => (store ??= createSqliteStore({ path }));
  const close = async () => {
    await store?.close();
    await inbox.close();
  };
  return { inbox, label: path, url: '', lock, close };
}

async function open(options: TargetOptions, env: NodeJS.ProcessEnv): Promise<OpenInbox> {
  if (options.database !== undefined && options.file !== undefined)
    throw new CliError('Pass --database or --file, not both.', EXIT.usage, 'target_conflict');
  if (options.file !== undefined) return openFile(options.file, options.table);
  const target = options.database ?? env[INBOX_ENV];
  if (target === undefined || target === '')
    throw new CliError(
      'No inbox to look at.',
      EXIT.usage,
      'target_missing',
      `Pass --database postgres://… or --file app.sqlite, or set ${INBOX_ENV}.`,
    );
  if (POSTGRES_URL.test(target)) return openPostgres(target, options.table);
  if (options.database !== undefined)
    throw new CliError(
      `--database ${maskUrl(target)} is not a postgres:// URL.`,
      EXIT.usage,
      'database_url_invalid',
      'For a SQLite file, pass --file <path>.',
    );
  return openFile(target, options.table);
}

/** Opens the inbox the options (or the environment) name. Throws a {@link CliError} otherwise. */
export async function openInbox(options: TargetOptions, env = process.env): Promise<OpenInbox> {
  try {
    return await open(options, env);
  } catch (error) {
    // A table name the inbox refuses, a runtime without SQLite: bad input, said as the library says it.
    if (isWebhookError(error) && error.code === 'options_invalid')
      throw new CliError(error.message, EXIT.usage, error.code);
    throw error;
  }
}

/** Failures that mean the server was not reached (or did not answer), not that it refused. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ECONNRESET',
]);

/** A failure of the database as a {@link CliError}: the password scrubbed, a missing table named. */
export function databaseError(error: unknown, target: OpenInbox, options: TargetOptions): unknown {
  if (!isWebhookError(error)) return error;
  const cause = (error as { cause?: { message?: string; code?: string } }).cause;
  const detail = scrub(cause?.message ?? '', target.url);
  if (error.code === 'options_invalid')
    return new CliError(scrub(error.message, target.url), EXIT.usage, error.code);
  if (/relation .* does not exist|no such table/i.test(detail))
    return new CliError(
      `${target.label} has no inbox table ${options.table ?? 'webhook_inbox'} (${detail}).`,
      EXIT.usage,
      'inbox_table_missing',
      'Run inbox.migrate() in your app, or pass --table with the name you gave it.',
    );
  if (error.code !== 'store_unavailable')
    return new CliError(scrub(error.message, target.url), EXIT.failed, error.code);
  if (
    target.url !== '' &&
    (cause === undefined || UNREACHABLE.has(cause.code ?? '') || /timeout/i.test(detail))
  )
    return new CliError(
      `The inbox at ${target.label} did not answer${detail ? `: ${detail}` : ''}.`,
      EXIT.unreachable,
      'database_unavailable',
    );
  return new CliError(
    `The inbox at ${target.label} failed${detail ? `: ${detail}` : ''}.`,
    EXIT.failed,
    'database_failed',
  );
}
