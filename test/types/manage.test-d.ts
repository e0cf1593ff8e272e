import type { WebhookError, WebhookErrorCode } from '@svc/webhooks';
import {
  type CrmClient,
  createMailClient,
  type MailClient,
  type RecoveryProgress,
  type RecoveryReport,
  recoverFailedDeliveries,
} from '@svc/webhooks/manage';
import { describe, expectTypeOf, it } from 'vitest';
import type { RecoveryItem } from '../../src/manage/recovery-types.js';

describe('@svc/webhooks/manage types', () => {
  it('recovery takes either client and resolves a report', () => {
    expectTypeOf(recoverFailedDeliveries)
      .parameter(0)
      .toHaveProperty('client')
      .toEqualTypeOf<MailClient | CrmClient>();
    expectTypeOf(recoverFailedDeliveries).returns.resolves.toEqualTypeOf<RecoveryReport>();
    expectTypeOf<RecoveryReport['stillFailing']>().toEqualTypeOf<RecoveryItem[]>();
    // @ts-expect-error a client is required
    void recoverFailedDeliveries({ since: '2h' });
    // @ts-expect-error since is a time or a duration, not a boolean
    void recoverFailedDeliveries({ client: {} as MailClient, since: true });
  });

  it('progress narrows on phase', () => {
    const onProgress = (p: RecoveryProgress) => {
      expectTypeOf(p.done).toBeNumber();
      if (p.phase === 'retry') {
        expectTypeOf(p.deliveryId).toBeString();
        expectTypeOf(p.outcome).toEqualTypeOf<RecoveryItem['outcome']>();
      } else if (p.phase === 'list') {
        // @ts-expect-error only retry progress names a delivery
        void p.deliveryId;
      }
    };
    expectTypeOf(onProgress).toBeFunction();
  });

  it('client inputs are typed by the services event names; errors carry the new codes', () => {
    const mail = createMailClient({ baseUrl: 'https://api.svcmail.test', apiKey: 'zm_live_x' });
    expectTypeOf(mail.service).toEqualTypeOf<'mail'>();
    // @ts-expect-error not an email event
    void mail.createWebhook({ url: 'https://h.example.com', events: ['deal.won'] });
    // @ts-expect-error not a scope
    void mail.createApiKey({ scopes: ['root'] });
    expectTypeOf<'rate_limited'>().toExtend<WebhookErrorCode>();
    expectTypeOf<'insufficient_scope'>().toExtend<WebhookErrorCode>();
    expectTypeOf<WebhookError['resetAt']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<WebhookError['apiCode']>().toEqualTypeOf<string | undefined>();
  });
});
