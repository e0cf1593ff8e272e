/** The `repair` option is typed per event: a correction must be the event's input shape. */
import {
  type CrmDataOf,
  type CrmRepairs,
  createCrmReceiver,
  createMailReceiver,
  type MailPayloadOf,
  type MailRepairs,
} from '@svc/webhooks';
import { expectTypeOf, it } from 'vitest';

it('a mail repair returns a payload of its event, or undefined; the handler gets the typed event', () => {
  const ok: MailRepairs = {
    bounced: (payload, issues) => {
      expectTypeOf(issues[0]!.path).toEqualTypeOf<readonly (string | number)[]>();
      return { ...(payload as MailPayloadOf<'bounced'>), provider: String(payload.mta) };
    },
    delivered: () => undefined,
  };
  const missing: MailRepairs = {
    // @ts-expect-error a correction without `provider` is not a `bounced` payload
    bounced: (payload) => ({ ...(payload as MailPayloadOf<'bounced'>), provider: undefined }),
  };
  const wrongType: MailRepairs = {
    // @ts-expect-error `provider` is a string
    bounced: (payload) => ({ ...(payload as MailPayloadOf<'bounced'>), provider: 5 }),
  };
  // @ts-expect-error an event this version does not know has no schema to repair
  const unknown: MailRepairs = { bounced_later: () => undefined };
  createMailReceiver({ secret: 'whsec_types_0123456789', repair: ok }).on('bounced', (event) => {
    expectTypeOf(event.payload.provider).toEqualTypeOf<string>();
  });
  void [missing, wrongType, unknown];
});

it('a CRM repair returns the data of its event', () => {
  const ok: CrmRepairs = {
    'deal.won': (data) => ({ ...(data as CrmDataOf<'deal.won'>), value: Number(data.value) }),
  };
  const wrong: CrmRepairs = {
    // @ts-expect-error `value` is a number or null
    'deal.won': (data) => ({ ...(data as CrmDataOf<'deal.won'>), value: '5000' }),
  };
  createCrmReceiver({ secret: 'whsec_types_0123456789', repair: ok });
  void wrong;
});
