/**
 * The inbox page in a real headless Chromium (Debian's `chromium` from scripts/ensure-chromium.sh,
 * driven by playwright-core) against `svc-webhooks inbox serve` as a real process over a SQLite file
 * (and over PostgreSQL with INBOX_PAGE_POSTGRES=1), with rows real receivers stored: filters narrow the rows, pages move through
 * them, a row shows its fields, headers, pretty-printed body and last error, and re-drive (one row,
 * then the filtered set) asks first and moves the rows. A hostile row's markup, script and bidi
 * controls appear as text and never run. Screenshots go to .tmp/ (git-ignored).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Inbox } from '@svc/webhooks/postgres';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InboxDatabase, postgresDatabase, sqliteDatabase, uniqueTable } from '../inbox/support.js';
import { root } from '../package/dist.js';
import { type PostgresServer, startPostgres } from '../support/servers.js';
import { buildCli } from './support/cli.js';
import {
  HOSTILE_ERROR,
  HOSTILE_EVENT,
  type RunningInboxPage,
  seedPageRows,
  startInboxServe,
} from './support/inbox-page.js';

const shots = join(root, '.tmp');
let cli: string;
let postgres: PostgresServer | undefined;
let browser: BrowserContext;
let profile: string;

/**
 * SQLite in CI (the routes run on both databases in inbox-page-api.test.ts); `INBOX_PAGE_POSTGRES=1`
 * drives the page over PostgreSQL too.
 */
const DATABASES =
  process.env.INBOX_PAGE_POSTGRES === '1' ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);

beforeAll(async () => {
  const executablePath = execFileSync('sh', [join(root, 'scripts/ensure-chromium.sh')], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  [cli, postgres] = await Promise.all([
    buildCli(),
    DATABASES.length > 1 ? startPostgres() : Promise.resolve(undefined),
  ]);
  profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  mkdirSync(shots, { recursive: true });
  browser = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await postgres?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe.each(DATABASES)('the inbox page in Chromium, on %s', (name) => {
  let db: InboxDatabase;
  let inbox: Inbox;
  let served: RunningInboxPage;
  let page: Page;
  let ids: { dead: number; hostile: number };
  const table = uniqueTable('page');
  const violations: string[] = [];
  const rows = () => page.locator('[data-testid=rows] tr[data-row]');
  const notice = () => page.locator('[data-testid=notice]').textContent();
  const shot = (step: string) =>
    page.screenshot({ path: join(shots, `inbox-page-${name}-${step}.png`), fullPage: true });

  beforeAll(async () => {
    db = name === 'sqlite' ? sqliteDatabase() : postgresDatabase(postgres!.connectionString);
    inbox = db.inbox({ table });
    ids = await seedPageRows(inbox, db.sql, table);
    const target =
      name === 'sqlite'
        ? ['--file', (db as InboxDatabase & { path: string }).path]
        : ['--database', postgres!.connectionString];
    served = await startInboxServe(cli, [...target, '--table', table]);
    page = await browser.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    page.on('dialog', (dialog) => void dialog.dismiss());
  }, 60_000);

  afterAll(async () => {
    await page?.close();
    await served?.stop();
    await inbox?.close();
    await db?.close();
  });

  it('lists the newest rows a page at a time, and moves to older ones and back', async () => {
    await page.goto(served.url);
    await expect.poll(() => rows().count()).toBe(25);
    expect(await page.locator('[data-testid=target]').textContent()).toContain(name);
    expect(await rows().first().getAttribute('data-row')).toBe(String(ids.hostile));
    await shot('1-list');
    await page.locator('[data-testid=older]').click();
    await expect.poll(() => rows().count()).toBe(9);
    expect(await page.locator('[data-testid=page-label]').textContent()).toMatch(/^page 2 · 9 rows/);
    expect(await page.locator('[data-testid=older]').isDisabled()).toBe(true);
    await page.locator('[data-testid=newer]').click();
    await expect.poll(() => rows().count()).toBe(25);
  });

  it('shows a hostile row as text: its markup and script never run, its bidi control is visible', async () => {
    const hostile = page.locator(`tr[data-row="${ids.hostile}"]`);
    // The event cell holds the literal text with the bidi override shown as an escape.
    expect(await hostile.locator('td').nth(3).textContent()).toBe(HOSTILE_EVENT.replace('\u202e', '\\u202e'));
    await hostile.click();
    await expect.poll(() => page.locator('#detail-id').textContent()).toBe(String(ids.hostile));
    expect(await page.locator('[data-testid=detail-error]').textContent()).toContain(
      HOSTILE_ERROR.replace('\u001b', '\\u001b'),
    );
    const body = await page.locator('[data-testid=detail-body]').textContent();
    expect(body).toContain('"note": "</pre><script>globalThis.pwned=2</script>"');
    expect(body).toContain('"flip": "abc\\u202edef"');
    expect(await page.locator('img, b, script:not(:first-of-type)').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { pwned?: unknown }).pwned)).toBeUndefined();
    await shot('2-hostile-row');
  });

  it('filters by status, service, event and ordering key', async () => {
    await page.locator('[data-testid=filter-status]').selectOption('quarantined');
    await expect.poll(() => rows().count()).toBe(2);
    await page.locator('[data-testid=filter-status]').selectOption('');
    await page.locator('[data-testid=filter-service]').selectOption('crm');
    await expect.poll(() => rows().count()).toBe(2);
    await page.locator('[data-testid=filter-service]').selectOption('');
    await page.locator('[data-testid=filter-event]').fill('delivered');
    await page.locator('[data-testid=filter-key]').fill('mail:message:m_page_7');
    await page.locator('[data-testid=filter-key]').press('Enter');
    await expect.poll(() => rows().count()).toBe(1);
    await page.locator('[data-testid=filter-event]').fill('');
    await page.locator('[data-testid=filter-key]').fill('crm:deal:deal_page');
    await page.locator('[data-testid=apply]').click();
    await expect.poll(() => rows().first().getAttribute('data-row')).toBe(String(ids.dead));
    expect(await rows().count()).toBe(1);
  });

  it('opens the dead row (last error, headers, pretty JSON body) and re-drives it after confirming', async () => {
    await rows().first().click();
    await expect.poll(() => page.locator('#detail-id').textContent()).toBe(String(ids.dead));
    expect(await page.locator('#detail-error-code').textContent()).toBe('handler_failed');
    expect(await page.locator('#detail-headers').textContent()).toMatch(/x-svc-event\s*deal\.won/i);
    const body = (await page.locator('[data-testid=detail-body]').textContent())!;
    expect(body.split('\n').length).toBeGreaterThan(5); // pretty-printed
    expect(JSON.parse(body)).toMatchObject({ event: 'deal.won' });
    expect(await page.locator('#detail-body-kind').textContent()).toMatch(/^JSON, \d+ bytes$/);
    await page.locator('[data-testid=redrive-row]').click();
    await expect.poll(() => page.locator('[data-testid=confirm]').isVisible()).toBe(true);
    await shot('3-dead-row-confirm');
    // Cancel moves nothing.
    await page.locator('[data-testid=confirm-no]').click();
    expect((await inbox.show(ids.dead))!.status).toBe('dead');
    await page.locator('[data-testid=redrive-row]').click();
    await page.locator('[data-testid=confirm-yes]').click();
    await expect.poll(notice).toBe('1 row moved back to received; the worker runs it again.');
    expect((await inbox.show(ids.dead))!).toMatchObject({ status: 'received', attempts: 0 });
    await expect.poll(() => page.locator('tr[data-row] .badge').first().textContent()).toBe('received');
    await expect.poll(() => page.locator('[data-testid=redrive-row]').isDisabled()).toBe(true);
  });

  it('re-drives the filtered set after confirming', async () => {
    await page.locator('[data-testid=filter-key]').fill('');
    await page.locator('[data-testid=filter-status]').selectOption('quarantined');
    await expect.poll(() => rows().count()).toBe(2);
    await page.locator('[data-testid=redrive-filter]').click();
    expect(await page.locator('#confirm-text').textContent()).toBe(
      'Re-drive every failed, dead, quarantined or superseded row where status = quarantined?',
    );
    await shot('4-filter-confirm');
    await page.locator('[data-testid=confirm-yes]').click();
    await expect.poll(notice).toBe('2 rows moved back to received; the worker runs them again.');
    await expect.poll(() => rows().count()).toBe(0);
    expect((await inbox.list({ status: 'quarantined' })).rows).toHaveLength(0);
    // The re-driven rows are back among the received ones (the dead one, both quarantined, 30 delivered).
    expect((await inbox.list({ status: 'received', limit: 100 })).rows).toHaveLength(MAIL_RECEIVED + 3);
    await page.locator('[data-testid=filter-status]').selectOption('received');
    await page.locator('[data-testid=filter-service]').selectOption('mail');
    await page.locator('[data-testid=filter-event]').fill('bounced');
    await page.locator('[data-testid=apply]').click();
    await expect.poll(() => rows().count()).toBe(2);
    await shot('5-after-redrive');
    expect(violations).toEqual([]);
  });
});

/** Rows `received` before the re-drives: the delivered ones (none ran: no worker). */
const MAIL_RECEIVED = 30;
