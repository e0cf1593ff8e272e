import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, MAIL_SECRET, mailDelivery, toRequest } from './support.js';

const quiet = { logger: false as const };

async function refusal(response: Response) {
  expect(response.status).toBe(401);
  return ((await response.json()) as { error: { code: string; message: string } }).error;
}

describe('signature_missing names the header it expected', () => {
  it('mail: names X-SvcMAIL-Sig', async () => {
    const mail = createMailReceiver({ secret: MAIL_SECRET, ...quiet });
    const delivery = mailDelivery('delivered');
    const { 'x-svcmail-sig': _signature, ...unsigned } = delivery.headers;
    const error = await refusal(await mail.handle(toRequest({ ...delivery, headers: unsigned })));
    expect(error.code).toBe('signature_missing');
    expect(error.message).toContain('x-svcmail-sig');
    expect(error.message).not.toContain('crm');
  });

  it('mail route, CRM delivery: says the CRM signature header is there, the wrong route', async () => {
    const mail = createMailReceiver({ secret: MAIL_SECRET, ...quiet });
    const error = await refusal(await mail.handle(toRequest(crmDelivery('deal.won'))));
    expect(error.code).toBe('signature_missing');
    expect(error.message).toContain('x-svcmail-sig');
    expect(error.message).toContain('x-svc-signature');
    expect(error.message).toContain('crm delivery sent to the mail receiver');
  });

  it('CRM route, mail delivery: the same, the other way round; the header value is never echoed', async () => {
    const crm = createCrmReceiver({ secret: CRM_SECRET, ...quiet });
    const delivery = mailDelivery('delivered');
    const error = await refusal(await crm.handle(toRequest(delivery)));
    expect(error.code).toBe('signature_missing');
    expect(error.message).toContain('x-svc-signature');
    expect(error.message).toContain('mail delivery sent to the crm receiver');
    expect(error.message).not.toContain(String(delivery.headers['x-svcmail-sig']).slice(7));
  });

  it('a renamed header is the one named', async () => {
    const mail = createMailReceiver({
      secret: MAIL_SECRET,
      headerNames: { signature: 'X-Mail-Signature' },
      ...quiet,
    });
    const error = await refusal(await mail.handle(toRequest(crmDelivery('deal.won'))));
    expect(error.message).toContain('x-mail-signature');
  });
});
