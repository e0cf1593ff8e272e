/**
 * The emulator's page in a real headless Chromium (Debian's `chromium`, installed by
 * scripts/ensure-chromium.sh, driven by playwright-core; no browser download): it renders the
 * webhooks, an emitted event appears live, and the Retry, Rotate secret and Reactivate buttons act
 * on the running emulator: the retry reaches the app.
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../package/dist.js';
import { buildCli, type RunningEmulator, startEmulator } from './support/cli.js';

const sign = (body: string, secret: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

let emulator: RunningEmulator;
let browser: BrowserContext;
let page: Page;
let profile: string;
let server: Server;
let appUrl: string;
let status = 503;
const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];

beforeAll(async () => {
  const executablePath = execFileSync('sh', [join(root, 'scripts/ensure-chromium.sh')], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  const cli = await buildCli();
  emulator = await startEmulator(cli, ['--speed', '600']);
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(status).end(status === 200 ? '{"ok":true}' : '{"error":"down"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
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
  await new Promise((r) => server?.close(r));
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

describe('the emulator page in Chromium', () => {
  let mailId: string;
  let mailSecret: string;
  let crmId: string;

  it('renders the webhooks registered over HTTP', async () => {
    const mail = (await (
      await api('/api/v1/webhooks', {
        method: 'POST',
        body: JSON.stringify({ url: appUrl, events: ['delivered', 'bounced'] }),
      })
    ).json()) as { id: string; secret: string };
    mailId = mail.id;
    mailSecret = mail.secret;
    const crm = (await (
      await api('/v1/webhooks', {
        method: 'POST',
        body: JSON.stringify({ name: 'crm', url: appUrl, events: ['deal.won'] }),
      })
    ).json()) as { id: string };
    crmId = crm.id;
    await page.goto(`${emulator.url}/`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('svc-webhooks emulator');
    await expect.poll(() => page.locator(`[data-webhook="${mailId}"]`).count()).toBe(1);
    expect(await page.locator(`[data-webhook="${crmId}"]`).textContent()).toContain(appUrl);
    await expect.poll(() => page.locator('#live').textContent()).toBe('live');
  });

  it('an event emitted from the form appears live with its failed attempts', async () => {
    await page.locator('[data-testid=emit-event]').fill('bounced');
    await page.locator('[data-testid=emit-button]').click();
    await expect
      .poll(() => page.locator('[data-testid=notice]').textContent())
      .toContain('Emitted bounced to 1 webhook');
    const row = page.locator('[data-testid=deliveries] tr[data-delivery]').first();
    // Three attempts 503 at +0, +1 min, +2 min (0.2 s at 600×), pushed to the page by the stream.
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 15_000 }).toBe('failed');
    expect(await row.locator('[data-testid=attempt-count]').textContent()).toBe('3');
    expect(await row.textContent()).toContain('503');
    expect(received).toHaveLength(3);
  });

  it('the Retry button re-sends the delivery: the app receives it and answers 200', async () => {
    status = 200;
    const row = page.locator('[data-testid=deliveries] tr[data-delivery]').first();
    const deliveryId = await row.getAttribute('data-delivery');
    await row.locator('[data-testid=retry]').click();
    await expect
      .poll(() => row.locator('[data-testid=attempt-count]').textContent(), { timeout: 15_000 })
      .toBe('4');
    expect(received).toHaveLength(4);
    const last = received[3]!;
    expect(last.headers['x-svcmail-id']).toBe(deliveryId);
    expect(last.headers['x-svcmail-sig']).toBe(sign(last.body, mailSecret));
    expect(await page.locator('[data-testid=notice]').textContent()).toContain(`Retried ${deliveryId}: 200`);
  });

  it('Rotate secret shows the new secret; the next delivery is signed with it', async () => {
    await page.locator(`[data-webhook="${mailId}"] [data-testid=rotate-secret]`).click();
    await expect
      .poll(() => page.locator('[data-testid=notice]').textContent())
      .toContain(`New secret of ${mailId}: whsec_`);
    const notice = (await page.locator('[data-testid=notice]').textContent())!;
    const secret = notice.slice(notice.lastIndexOf(' ') + 1);
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
    mkdirSync(join(root, '.tmp'), { recursive: true });
    await page.screenshot({ path: join(root, '.tmp', 'emulator-page.png'), fullPage: true });
  });
});
