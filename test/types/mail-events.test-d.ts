import type { MailWebhookEvent } from '@svc/webhooks';
import { mailEventSchema, mailPayloadSchemas } from '@svc/webhooks/schemas';
import { describe, expectTypeOf, it } from 'vitest';
import {
  constructMailEvent,
  createMailReceiver,
  type MailEvent,
  type MailEventName,
  type MailEventOf,
  type MailPayloadOf,
  rawFields,
  type UnknownMailEvent,
} from '../../src/index.js';
import { parseMailEvent } from '../../src/mail/parse-event.js';

describe('mail event types', () => {
  it('names are the literal union of the 13 events', () => {
    expectTypeOf<'bounced'>().toExtend<MailEventName>();
    expectTypeOf<'nope'>().not.toExtend<MailEventName>();
  });

  it('narrowing on name yields that event payload', () => {
    const handle = (event: MailEvent) => {
      if (event.name === 'clicked') {
        expectTypeOf(event).toEqualTypeOf<MailEventOf<'clicked'>>();
        expectTypeOf(event.payload.url).toEqualTypeOf<string>();
        expectTypeOf(event.payload.timestamp).toEqualTypeOf<string>();
      }
      if (event.name === 'bounced') {
        expectTypeOf(event.payload).toEqualTypeOf<MailPayloadOf<'bounced'>>();
        expectTypeOf(event.payload.provider).toEqualTypeOf<string>();
        expectTypeOf(event.payload.latency_ms).toEqualTypeOf<number | undefined>();
        expectTypeOf(event.payload.response).toEqualTypeOf<string | undefined>();
        // @ts-expect-error bounced carries no url
        event.payload.url.toUpperCase();
      }
      if (event.name === 'blocked') expectTypeOf(event.payload.provider).toEqualTypeOf<string | undefined>();
      if (event.name === 'reputation_dropped') {
        expectTypeOf(event.payload.bounce_rate).toEqualTypeOf<number | undefined>();
      }
    };
    expectTypeOf(handle).toBeFunction();
  });

  it('payload types are exact: a misspelt field does not compile; extras through rawFields', () => {
    expectTypeOf<MailPayloadOf<'opened'>['client_id']>().toEqualTypeOf<string>();
    expectTypeOf<keyof MailPayloadOf<'clicked'>>().toEqualTypeOf<
      'event' | 'client_id' | 'message_id' | 'to' | 'timestamp' | 'url'
    >();
    const handle = (event: MailEvent) => {
      // @ts-expect-error misspelt: message_id
      event.payload.mesage_id;
      if (event.name === 'bounced') {
        expectTypeOf(event.payload.message_id).toEqualTypeOf<string>();
        // @ts-expect-error misspelt: message_id
        event.payload.mesage_id;
        // @ts-expect-error a field this version does not know is not typed on the payload
        event.payload.added_later;
        expectTypeOf(rawFields(event.payload).added_later).toBeUnknown();
        expectTypeOf(rawFields(event.payload)).toEqualTypeOf<Readonly<Record<string, unknown>>>();
      }
    };
    expectTypeOf(handle).toBeFunction();
    // @ts-expect-error misspelt: provider
    type _Misspelt = MailPayloadOf<'delivered'>['provder'];
    // @ts-expect-error no string index: an arbitrary key is not a field
    type _Indexed = MailPayloadOf<'opened'>[string];
  });

  it('receiver handlers see the exact payload of their event', () => {
    const receiver = createMailReceiver({ secret: 'whsec_test' });
    receiver.on('clicked', (event) => {
      expectTypeOf(event.payload.url).toEqualTypeOf<string>();
      // @ts-expect-error misspelt: url
      event.payload.ulr;
    });
  });

  it('an unknown name is refused where a known one is required', () => {
    // @ts-expect-error 'nope' is not a mail event name
    type _Payload = MailPayloadOf<'nope'>;
    // @ts-expect-error 'deal.won' is a CRM event, not a mail one
    type _Event = MailEventOf<'deal.won'>;
    // @ts-expect-error no schema for an unknown name
    mailPayloadSchemas.nope;
  });

  it('construct and parse return known | unknown; known narrows', async () => {
    const event = await constructMailEvent(new Uint8Array(), new Headers(), 'secret');
    expectTypeOf(event).toEqualTypeOf<MailWebhookEvent>();
    expectTypeOf(parseMailEvent('', {}, { secretIndex: 0 })).toEqualTypeOf<MailWebhookEvent>();
    if (!event.known) {
      expectTypeOf(event).toEqualTypeOf<UnknownMailEvent>();
      expectTypeOf(event.payload).toBeUnknown();
      expectTypeOf(event.name).toEqualTypeOf<string>();
      return;
    }
    expectTypeOf(event).toEqualTypeOf<MailEvent>();
    if (event.name === 'opened') expectTypeOf(event.payload.message_id).toEqualTypeOf<string>();
    expectTypeOf(event.deliveryId).toEqualTypeOf<string>();
    expectTypeOf(event.secretIndex).toEqualTypeOf<number>();
    expectTypeOf(event.service).toEqualTypeOf<'mail'>();
  });

  it('accepts both header shapes and refuses a parsed body', async () => {
    await constructMailEvent('{}', { 'x-svcmail-sig': ['a'] }, ['s1', 's2'], {
      headerNames: { signature: 'X' },
    });
    // @ts-expect-error a parsed object is not a raw body
    await constructMailEvent({ event: 'opened' }, {}, 's');
    // @ts-expect-error unknown header-name key
    await constructMailEvent('{}', {}, 's', { headerNames: { sig: 'X' } });
  });

  it('the discriminated union schema narrows on name', () => {
    const parsed = mailEventSchema.parse({});
    if (parsed.name === 'clicked') expectTypeOf(parsed.payload.url).toEqualTypeOf<string>();
  });
});
