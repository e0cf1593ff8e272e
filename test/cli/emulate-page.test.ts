/**
 * The emulator's page in a real headless Chromium (Debian's `chromium`, installed by
 * scripts/ensure-chromium.sh, driven by playwright-core; no browser download) against the emulator
 * as a real process and real apps: the Express example (this package's receivers) and a plain
 * node:http app. Webhooks are added with the form, events sent from the catalogue's payload editor
 * (an invalid payload refused with the schema's error, nothing sent), the inspector shows each
 * attempt's request and answer with the receiver's error code in red, the filters narrow the
 * deliveries, and the Retry, Rotate secret and Reactivate buttons act on the running emulator.
 * Screenshots go to .tmp/ (git-ignored).
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/express/server.js';
import { root } from '../package/dist.js';
import { buildCli, type RunningEmulator, startEmulator } from './support/cli.js';

const sign = (body: string, secret: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const APP_SECRET = 'whsec_page_test_app_0123456789abcdef';
const RED = 'rgb(192, 38, 45)';
const shots = join(root, '.tmp');

let emulator: RunningEmulator;
let browser: BrowserContext;
let page: Page;
let profile: string;
const servers: Server[] = [];
let plainUrl: string;
let appUrl: string;
let status = 503;
const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];
/** What the plain app received of one email event. */
const receivedOf = (event: string) => received.filter((r) => r.headers['x-svcmail-event'] === event);
const handled: Array<{ service: string; event: string; deliveryId: string }> = [];

function listen(server: Server): Promise<string> {
  servers.push(server);
  return new Promise((r) =>
    server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

beforeAll(async () => {
  const executablePath = execFileSync('sh', [join(root, 'scripts/ensure-chromium.sh')], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  const cli = await buildCli();
  emulator = await startEmulator(cli, ['--speed', '600']);
  // A plain app: 200, or 503 with a 40 000-byte body (more than the inspector keeps).
  plainUrl = `${await listen(
    createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(status).end(status === 200 ? '{"ok":true}' : 'x'.repeat(40_000));
      });
    }),
  )}/hooks`;
  // The Express example with this package's receivers; its email secret is APP_SECRET.
  appUrl = await listen(
    createServer(
      createApp({
        mailSecret: APP_SECRET,
        crmSecret: APP_SECRET,
        print: (line) => handled.push(JSON.parse(line) as (typeof handled)[number]),
        logger: () => {},
      }),
    ),
  );
  profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  mkdirSync(shots, { recursive: true });
  // A fresh profile directory per run (Playwright passes it as --user-data-dir).
  browser = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1400, height: 900 },
    // As root in a container Chromium needs --no-sandbox; the rest keeps it off the network.
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
  page = browser.pages()[0] ?? (await browser.newPage());
});

afterAll(async () => {
  await browser?.close();
  await emulator?.stop();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${emulator.url}${path}`, {
    ...init,
    headers: {
      'X-API-Key': 'zm_live_test_admin',
      Authorization: 'Bearer crm_test_token',
      'Content-Type': 'application/json',
    },
  });

const rows = () => page.locator('[data-testid=deliveries] tr[data-delivery]');
const notice = () => page.locator('[data-testid=notice]').textContent();
const editorPayload = async () =>
  JSON.parse(await page.locator('[data-testid=payload]').inputValue()) as Record<string, unknown>;
/** The computed text colour of an element (run in the page: this project's types have no DOM). */
const colorOf = (locator: Locator) =>
  locator.evaluate(
    (node) =>
      (globalThis as unknown as { getComputedStyle(n: unknown): { color: string } }).getComputedStyle(node)
        .color,
  );
const shot = (name: string) =>
  page.screenshot({ path: join(shots, `emulator-page-${name}.png`), fullPage: true });

async function setFilters(service: string, event: string, deliveryStatus: string): Promise<void> {
  await page.locator('[data-testid=filter-service]').selectOption(service);
  await page.locator('[data-testid=filter-event]').selectOption(event);
  await page.locator('[data-testid=filter-status]').selectOption(deliveryStatus);
}

describe('the emulator page in Chromium', () => {
  let mailId: string;
  let mailSecret: string;
  let crmId: string;

  it('renders the catalogue with a pre-filled editor, both clocks, and the webhooks registered over HTTP', async () => {
    const mail = (await (
      await api('/api/v1/webhooks', {
        method: 'POST',
        body: JSON.stringify({ url: plainUrl, events: ['delivered', 'bounced'] }),
      })
    ).json()) as { id: string; secret: string };
    mailId = mail.id;
    mailSecret = mail.secret;
    const crm = (await (
      await api('/v1/webhooks', {
        method: 'POST',
        body: JSON.stringify({ name: 'crm', url: plainUrl, events: ['deal.won'] }),
      })
    ).json()) as { id: string };
    crmId = crm.id;
    await page.goto(`${emulator.url}/`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('svc-webhooks emulator');
    await expect.poll(() => page.locator(`[data-webhook="${mailId}"]`).count()).toBe(1);
    expect(await page.locator(`[data-webhook="${crmId}"]`).textContent()).toContain(plainUrl);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
    // 13 email events, each with its line from the spec; the editor holds a valid `delivered`.
    await expect.poll(() => page.locator('#catalogue [data-event]').count()).toBe(13);
    expect(await page.locator('#catalogue [data-event="bounced"]').textContent()).toContain(
      'The destination refused the message.',
    );
    expect(await editorPayload()).toMatchObject({ event: 'delivered', client_id: 'client_test' });
    // Wall time beside the emulated time, which runs 600 times as fast.
    expect(await page.locator('[data-testid=clocks]').textContent()).toMatch(
      /^wall \d\d:\d\d:\d\d · emulated \d\d:\d\d:\d\d \(600× speed\)$/,
    );
    await page.locator('[data-service-tab=crm]').click();
    await expect.poll(() => page.locator('#catalogue [data-event="deal.won"]').count()).toBe(1);
    expect(await editorPayload()).toHaveProperty('id');
    await page.locator('[data-service-tab=mail]').click();
  });

  it('adds webhooks with the form: with the app’s own secret, or a new one shown once', async () => {
    await page.locator('[data-testid=add-service]').selectOption('mail');
    await page.locator('[data-testid=add-url]').fill(`${appUrl}/webhooks/mail`);
    await page.locator('[data-testid=add-events]').fill('opened, clicked');
    await page.locator('[data-testid=add-secret]').fill(APP_SECRET);
    await page.locator('[data-testid=add-button]').click();
    await expect.poll(notice).toMatch(/^Added mail webhook wh_\w+, signed with the secret you gave\.$/);
    // The same app, but a webhook with a generated secret the app does not know.
    await page.locator('[data-testid=add-events]').fill('opened');
    await page.locator('[data-testid=add-button]').click();
    await expect.poll(notice).toMatch(/Its secret \(shown once\): whsec_[0-9a-f]{48}$/);
    await expect.poll(() => page.locator('[data-testid=webhooks] tr[data-webhook]').count()).toBe(4);
    // A URL the services refuse: the form shows why, nothing is added.
    await page.locator('[data-testid=add-url]').fill('not a url');
    await page.locator('[data-testid=add-button]').click();
    await expect
      .poll(() => page.locator('[data-testid=add-errors]').textContent())
      .toContain('url must be an absolute http(s) URL');
    expect(await page.locator('[data-testid=webhooks] tr[data-webhook]').count()).toBe(4);
  });

  it('sends the edited payload from the editor: signed, delivered to both, handled by the app once', async () => {
    await page.locator('#catalogue [data-event="opened"]').click();
    const payload = await editorPayload();
    expect(payload.event).toBe('opened');
    await page
      .locator('[data-testid=payload]')
      .fill(JSON.stringify({ ...payload, to: 'ana@example.com' }, null, 2));
    await page.locator('[data-testid=send-event]').click();
    await expect.poll(notice).toBe('Sent opened to 2 webhook(s).');
    await expect.poll(() => handled.filter((h) => h.event === 'opened').length).toBe(1);
    const state = (await (await api('/_emulator/state')).json()) as {
      deliveries: Array<{ event: string; status: string; attempts: unknown[] }>;
    };
    const opened = state.deliveries.filter((d) => d.event === 'opened');
    // One verified and handled; the other refused (and retried on the emulator's clock).
    expect(opened.map((d) => d.status)).toContain('succeeded');
    expect(opened.find((d) => d.status !== 'succeeded')?.status).toMatch(/^(pending|failed)$/);
    // The inspector opened on the first delivery: the exact payload went out.
    await expect.poll(() => page.locator('[data-testid=inspector]').isVisible()).toBe(true);
    expect(await page.locator('[data-testid=request-body]').first().textContent()).toContain(
      '"to": "ana@example.com"',
    );
  });

  it('the inspector shows the failing attempt’s request and answer, the error code in red', async () => {
    const failed = rows().filter({ hasText: 'signature_mismatch' }).first();
    await expect.poll(() => failed.count(), { timeout: 15_000 }).toBe(1);
    await failed.click();
    const inspector = page.locator('[data-testid=inspector]');
    await expect
      .poll(() => inspector.locator('[data-testid=response-status]').first().textContent())
      .toBe('HTTP 401');
    const code = inspector.locator('[data-testid=error-code]').first();
    expect(await code.textContent()).toBe('signature_mismatch');
    await expect.poll(() => colorOf(code)).toBe(RED);
    expect(await inspector.locator('[data-testid=response-body]').first().textContent()).toContain(
      '"code": "signature_mismatch"',
    );
    const request = inspector.locator('[data-testid=request]').first();
    expect(await request.textContent()).toContain(`POST ${appUrl}/webhooks/mail`);
    expect(await request.textContent()).toMatch(/x-svcmail-sig\s*sha256=[0-9a-f]{64}/);
    // The list shows the same code in red.
    await expect.poll(() => colorOf(failed.locator('[data-testid=error-code]'))).toBe(RED);
    await shot('inspector');
  });

  it('an invalid payload is refused with the schema’s error; nothing is sent', async () => {
    const before = (await rows().count()) + received.length + handled.length;
    const payload = await editorPayload();
    await page.locator('[data-testid=payload]').fill(JSON.stringify({ ...payload, to: 42 }, null, 2));
    await page.locator('[data-testid=send-event]').click();
    const errors = page.locator('[data-testid=payload-errors]');
    await expect
      .poll(() => errors.textContent())
      .toContain('to: Invalid input: expected string, received number');
    await expect.poll(() => colorOf(errors)).toBe(RED);
    await expect.poll(notice).toMatch(/^Not sent: Not a valid opened payload: to: /);
    await shot('invalid-payload');
    await page.locator('[data-testid=payload]').fill('{ "event": "opened", ');
    await page.locator('[data-testid=send-event]').click();
    await expect.poll(() => errors.textContent()).toMatch(/^Not JSON: /);
    expect((await rows().count()) + received.length + handled.length).toBe(before);
    await page.locator('[data-testid=reset-payload]').click();
    await expect.poll(async () => (await editorPayload()).event).toBe('opened');
    expect(await errors.textContent()).toBe('');
  });

  it('filters the deliveries by service, event and status', async () => {
    await api('/_emulator/events', {
      method: 'POST',
      body: JSON.stringify({ service: 'crm', event: 'deal.won', data: { value: 5000 } }),
    });
    await expect
      .poll(() => page.locator('tr[data-service=crm][data-status=failed]').count(), { timeout: 15_000 })
      .toBe(1);
    const shown = async () => {
      const list: string[] = [];
      for (const row of await rows().all()) {
        const attrs = ['data-service', 'data-event', 'data-status'].map((name) => row.getAttribute(name));
        list.push((await Promise.all(attrs)).join(' '));
      }
      return list;
    };
    expect(await shown()).toHaveLength(3);
    await setFilters('', '', 'failed');
    await expect.poll(shown).toEqual(['crm deal.won failed', 'mail opened failed']);
    await setFilters('mail', '', '');
    await expect.poll(async () => (await shown()).every((r) => r.startsWith('mail opened'))).toBe(true);
    expect(await shown()).toHaveLength(2);
    await setFilters('', 'deal.won', '');
    await expect.poll(shown).toEqual(['crm deal.won failed']);
    await setFilters('mail', 'deal.won', '');
    await expect
      .poll(() => page.locator('[data-testid=deliveries] td.empty').textContent())
      .toBe('No delivery matches the filters.');
    await setFilters('', '', 'failed');
    await shot('filtered');
    await setFilters('', '', '');
    await expect.poll(shown).toHaveLength(3);
  });

  it('a delivery sent from the editor fails three times; the inspector keeps a bounded answer', async () => {
    await page.locator('#catalogue [data-event="bounced"]').click();
    await page.locator('[data-testid=send-event]').click();
    await expect.poll(notice).toBe('Sent bounced to 1 webhook(s).');
    const row = page.locator('[data-testid=deliveries] tr[data-event=bounced]');
    // Three attempts 503 at +0, +1 min, +2 min (0.2 s at 600×), pushed to the page by the stream.
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 15_000 }).toBe('failed');
    expect(await row.locator('[data-testid=attempt-count]').textContent()).toBe('3');
    expect(receivedOf('bounced')).toHaveLength(3);
    await row.click();
    const inspector = page.locator('[data-testid=inspector]');
    await expect.poll(() => inspector.locator('.attempt').count()).toBe(3);
    const body = inspector.locator('[data-testid=response-body]').first();
    expect((await body.textContent())!.length).toBe(16_384);
    expect(await inspector.locator('.attempt').first().textContent()).toContain(
      'cut: the first 16384 characters',
    );
  });

  it('the Retry button re-sends the delivery: the app receives it and answers 200', async () => {
    status = 200;
    const row = page.locator('[data-testid=deliveries] tr[data-event=bounced]');
    const deliveryId = await row.getAttribute('data-delivery');
    await row.locator('[data-testid=retry]').click();
    await expect
      .poll(() => row.locator('[data-testid=attempt-count]').textContent(), { timeout: 15_000 })
      .toBe('4');
    expect(receivedOf('bounced')).toHaveLength(4);
    const last = receivedOf('bounced')[3]!;
    expect(last.headers['x-svcmail-id']).toBe(deliveryId);
    expect(last.headers['x-svcmail-sig']).toBe(sign(last.body, mailSecret));
    expect(await notice()).toContain(`Retried ${deliveryId}: 200`);
    await expect.poll(() => page.locator('[data-testid=inspector] .attempt').count()).toBe(4);
    await shot('overview');
    // Nothing sticks out of its card at 1400 px.
    expect(
      await page.evaluate(
        "[...document.querySelectorAll('section.card')].filter((c) => c.scrollWidth > c.clientWidth).length",
      ),
    ).toBe(0);
  });

  it('Rotate secret shows the new secret; the next delivery is signed with it', async () => {
    await page.locator(`[data-webhook="${mailId}"] [data-testid=rotate-secret]`).click();
    await expect.poll(notice).toContain(`New secret of ${mailId}: whsec_`);
    const text = (await notice())!;
    const secret = text.slice(text.lastIndexOf(' ') + 1);
    await api('/_emulator/events', {
      method: 'POST',
      body: JSON.stringify({ service: 'mail', event: 'delivered' }),
    });
    const last = received[received.length - 1]!;
    expect(last.headers['x-svcmail-event']).toBe('delivered');
    expect(last.headers['x-svcmail-sig']).toBe(sign(last.body, secret));
  });

  it('Reactivate turns an inactive CRM webhook back on', async () => {
    await api(`/v1/webhooks/${crmId}`, { method: 'PATCH', body: JSON.stringify({ active: false }) });
    const row = page.locator(`[data-webhook="${crmId}"]`);
    await page.reload();
    await expect.poll(() => row.locator('.badge').textContent()).toBe('inactive');
    await row.locator('[data-testid=reactivate]').click();
    await expect.poll(() => row.locator('.badge').textContent()).toBe('active');
    const list = (await (await api('/v1/webhooks')).json()) as {
      data: Array<{ id: string; active: boolean }>;
    };
    expect(list.data.find((w) => w.id === crmId)?.active).toBe(true);
  });
});
