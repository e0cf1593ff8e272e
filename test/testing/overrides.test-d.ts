/**
 * Fixture overrides are exact: a misspelt field in an emitter, fixture or signed-request override
 * does not compile (it used to, and the emitter sent the fixture's own `to` plus a stray `too`).
 */
import type { MailPayloadOf } from '@svc/webhooks';
import {
  createCrmEmitter,
  createFixtures,
  createMailEmitter,
  createSignedRequest,
  crmData,
  mailPayload,
  type Overrides,
} from '@svc/webhooks/testing';
import { describe, expectTypeOf, it } from 'vitest';

const secret = 'whsec_0123456789abcdef0123456789abcdef';

describe('fixture overrides are exact', () => {
  it('the emitters refuse a misspelt field and accept the known ones', () => {
    const mail = createMailEmitter();
    // @ts-expect-error: `too` is not a field of the bounced payload
    void mail.emit('bounced', { too: 'ana@example.com' });
    void mail.emit('bounced', { to: 'ana@example.com', provider: undefined });
    // @ts-expect-error: a known field keeps its type
    void mail.emit('bounced', { to: 42 });
    const crm = createCrmEmitter();
    // @ts-expect-error: `amount_cent` is not a field of deal.won
    void crm.emit('deal.won', { amount_cent: 1 });
    // An event this package does not know (the `newEvents` option) takes any payload; a known one keeps its type.
    void mail.emit('warmed_up', { level: 3 });
    void crm.emit('deal.reopened', { deal_id: 'd_1' });
  });

  it('fixtures and signed requests refuse it too', () => {
    // @ts-expect-error: misspelt field
    mailPayload('bounced', { too: 'ana@example.com' });
    // @ts-expect-error: misspelt field
    crmData('deal.won', { amount_cent: 1 });
    // @ts-expect-error: misspelt field
    createFixtures().mail('delivered', { too: 'ana@example.com' });
    // @ts-expect-error: misspelt field
    void createSignedRequest({ service: 'mail', event: 'bounced', secret, payload: { too: 'x' } });
  });

  it('a field the types do not know is still testable, by saying so with a cast', () => {
    const newer = { to: 'ana@example.com', tier: 'gold' } as Overrides<MailPayloadOf<'bounced'>>;
    expectTypeOf(mailPayload('bounced', newer)).toEqualTypeOf<MailPayloadOf<'bounced'>>();
  });
});
