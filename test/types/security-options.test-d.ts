/**
 * The replay and relabelling options exist where they apply: `requireBodyEvent` on the email service
 * only (the CRM event name is always in the signed body), `maxEventAgeMs` and `clock` on both.
 */
import {
  type Clock,
  type ConstructCrmEventOptions,
  type ConstructMailEventOptions,
  type CrmReceiverOptions,
  createCrmReceiver,
  createMailReceiver,
  type MailReceiverOptions,
} from '@svc/webhooks';
import { describe, expectTypeOf, it } from 'vitest';
import { truncateUntrusted } from '../../src/core/untrusted.js';

describe('security options', () => {
  it('requireBodyEvent is a mail option only', () => {
    expectTypeOf<MailReceiverOptions['requireBodyEvent']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<ConstructMailEventOptions['requireBodyEvent']>().toEqualTypeOf<boolean | undefined>();
    // @ts-expect-error: the CRM event name is in the signed body already
    createCrmReceiver({ secret: 's', requireBodyEvent: true });
    // @ts-expect-error: not a CRM construct option either
    const crm: ConstructCrmEventOptions = { requireBodyEvent: true };
    void crm;
  });

  it('maxEventAgeMs is a number on both services', () => {
    expectTypeOf<MailReceiverOptions['maxEventAgeMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<CrmReceiverOptions['maxEventAgeMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<ConstructCrmEventOptions['clock']>().toEqualTypeOf<Clock | undefined>();
    createMailReceiver({ secret: 's', maxEventAgeMs: 60_000, requireBodyEvent: true });
    // @ts-expect-error: milliseconds, not a string
    createCrmReceiver({ secret: 's', maxEventAgeMs: '1m' });
  });

  it('truncateUntrusted returns a string for a string', () => {
    expectTypeOf(truncateUntrusted(undefined)).toEqualTypeOf<string | undefined>();
    expectTypeOf(truncateUntrusted('x')).toEqualTypeOf<string>();
  });
});
