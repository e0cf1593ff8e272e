import {
  type CrmEventOf,
  createCrmReceiver,
  createMailReceiver,
  type HandlerContext,
  type MailEventOf,
  type MailPayloadOf,
  type MailReceiver,
  type UnknownCrmEvent,
  type UnknownMailEvent,
} from '@svc/webhooks';
import { describe, expectTypeOf, it } from 'vitest';

const mail = createMailReceiver({ secret: 'whsec' });
const crm = createCrmReceiver({ secret: 'whsec' });

describe('receiver handler types', () => {
  it("on('bounced') narrows the event and its payload", () => {
    mail.on('bounced', (event, context) => {
      expectTypeOf(event).toEqualTypeOf<MailEventOf<'bounced'>>();
      expectTypeOf(event.name).toEqualTypeOf<'bounced'>();
      expectTypeOf(event.payload).toEqualTypeOf<MailPayloadOf<'bounced'>>();
      expectTypeOf(event.payload.message_id).toBeString();
      expectTypeOf(context).toEqualTypeOf<HandlerContext>();
      expectTypeOf(context.signal).toEqualTypeOf<AbortSignal>();
      expectTypeOf(context.timeLeftMs).returns.toBeNumber();
      expectTypeOf(context.dedupKey).toBeString();
    });
    mail.on('clicked', (event) => {
      expectTypeOf(event.payload.url).toBeString();
    });
  });

  it("on(['deal.won', 'deal.lost']) gives the union of the two", () => {
    crm.on(['deal.won', 'deal.lost'], (event) => {
      expectTypeOf(event).toEqualTypeOf<CrmEventOf<'deal.won'> | CrmEventOf<'deal.lost'>>();
      expectTypeOf(event.name).toEqualTypeOf<'deal.won' | 'deal.lost'>();
      if (event.name === 'deal.won') expectTypeOf(event.data.value).toEqualTypeOf<number | null>();
      expectTypeOf(event.data.deal_id).toBeString();
      // Only deal.won declares value: on the union it is not a field (types are exact).
      // @ts-expect-error value exists on deal.won only
      event.data.value;
    });
  });

  it('refuses names the service does not send', () => {
    // @ts-expect-error not an email-service event
    mail.on('nope', () => {});
    // @ts-expect-error a CRM event on the email receiver
    mail.on('deal.won', () => {});
    // @ts-expect-error one bad name in the list
    crm.on(['deal.won', 'deal.nope'], () => {});
  });

  it('onUnknown gets unvalidated events; onAny every known one; registration chains', () => {
    mail.onUnknown((event) => {
      expectTypeOf(event).toEqualTypeOf<UnknownMailEvent>();
      expectTypeOf(event.payload).toBeUnknown();
    });
    crm.onUnknown((event) => expectTypeOf(event).toEqualTypeOf<UnknownCrmEvent>());
    mail.onAny((event) => {
      expectTypeOf(event.known).toEqualTypeOf<true>();
    });
    expectTypeOf(mail.on('delivered', () => {})).toEqualTypeOf<MailReceiver>();
    expectTypeOf(mail.receive).returns.resolves.toHaveProperty('kind');
  });
});
