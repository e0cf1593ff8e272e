/**
 * Every error answer links to its code's entry on the documentation site (as Stripe's `doc_url`
 * does): package.json's `homepage` + `errors.html#<code>`, an anchor the site gives each row of
 * docs/errors.md's table. Checked for every code, through `WebhookError#toJSON`, a receiver's answer
 * and the multi-route 404.
 */
import { readFileSync } from 'node:fs';
import { createMailReceiver, WEBHOOK_ERROR_STATUS, WebhookError, type WebhookErrorCode } from '@svc/webhooks';
import { createFetchHandler } from '@svc/webhooks/fetch';
import { expect, it } from 'vitest';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';

const root = new URL('../../', import.meta.url);
const { homepage } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { homepage: string };
const errorsPage = readFileSync(new URL('docs/errors.md', root), 'utf8');
const urlOf = (code: string) => `${homepage}errors.html#${code}`;

it('every code has its row in docs/errors.md and its doc_url in the JSON body', () => {
  for (const code of Object.keys(WEBHOOK_ERROR_STATUS) as WebhookErrorCode[]) {
    expect(errorsPage, code).toContain(`| \`${code}\` |`);
    expect(new WebhookError(code, 'm').toJSON()).toEqual({
      error: { code, message: 'm', doc_url: urlOf(code) },
    });
  }
});

it("a receiver's refusal and the routes' 404 carry it", async () => {
  const receiver = createMailReceiver({ secret: MAIL_SECRET });
  const delivery = mailDelivery('delivered');
  delivery.headers['x-svcmail-sig'] = `sha256=${'0'.repeat(64)}`;
  const refused = await deliver(receiver, delivery);
  expect(JSON.parse(refused.body ?? '')).toMatchObject({ error: { doc_url: urlOf('signature_mismatch') } });
  const handler = createFetchHandler({ '/webhooks/mail': receiver });
  const missing = await handler(new Request('http://127.0.0.1/nowhere', { method: 'POST', body: '{}' }));
  expect(missing.status).toBe(404);
  expect(await missing.json()).toMatchObject({ error: { code: 'not_found', doc_url: urlOf('not_found') } });
});
