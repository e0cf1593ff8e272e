import { crmDataSchemas, crmEnvelopeSchema } from '@svc/webhooks/schemas';
import { describe, expectTypeOf, it } from 'vitest';
import { parseCrmEvent } from '../../src/crm/parse-event.js';
import type { CrmAnyEnvelope, CrmEnvelopeOf, CrmWebhookEvent } from '../../src/crm/types.js';
import {
  type CrmDataOf,
  type CrmEvent,
  type CrmEventName,
  type CrmEventOf,
  constructCrmEvent,
  createCrmReceiver,
  rawFields,
  type UnknownCrmEvent,
} from '../../src/index.js';

describe('crm event types', () => {
  it('names are the literal union of the 13 events', () => {
    expectTypeOf<'deal.won'>().toExtend<CrmEventName>();
    expectTypeOf<'bounced'>().not.toExtend<CrmEventName>();
  });

  it('narrowing on name yields that event data', () => {
    const handle = (event: CrmEvent) => {
      if (event.name === 'deal.won') {
        expectTypeOf(event).toEqualTypeOf<CrmEventOf<'deal.won'>>();
        expectTypeOf(event.data.value).toEqualTypeOf<number | null>();
        expectTypeOf(event.envelope).toEqualTypeOf<CrmEnvelopeOf<'deal.won'>>();
        expectTypeOf(event.envelope.event).toEqualTypeOf<'deal.won'>();
        // @ts-expect-error deal.won data has no email
        event.data.email.toLowerCase();
      }
      if (event.name === 'contact.created') {
        expectTypeOf(event.data).toEqualTypeOf<CrmDataOf<'contact.created'>>();
        expectTypeOf(event.data.tags).toEqualTypeOf<string[]>();
        expectTypeOf(event.data.email).toEqualTypeOf<string | null>();
      }
      if (event.name === 'contact.unsubscribed') {
        // Known values are offered, any string is accepted.
        expectTypeOf<'erasure'>().toExtend<typeof event.data.reason>();
        expectTypeOf<'anything'>().toExtend<typeof event.data.reason>();
        expectTypeOf(event.data.channel).toExtend<string | null | undefined>();
      }
      if (event.name === 'campaign.completed') expectTypeOf(event.data.sent).toEqualTypeOf<number>();
    };
    expectTypeOf(handle).toBeFunction();
  });

  it('data and envelope types are exact: a misspelt field does not compile; extras through rawFields', () => {
    expectTypeOf<keyof CrmDataOf<'deal.won'>>().toEqualTypeOf<'deal_id' | 'title' | 'value'>();
    expectTypeOf<keyof CrmEnvelopeOf<'deal.won'>>().toEqualTypeOf<
      'id' | 'timestamp' | 'tenant_id' | 'event' | 'data'
    >();
    const handle = (event: CrmWebhookEvent) => {
      // @ts-expect-error misspelt: tenant_id
      event.envelope.tenantid;
      if (!event.known) return;
      if (event.name === 'contact.created') {
        expectTypeOf(event.data.email).toEqualTypeOf<string | null>();
        // @ts-expect-error misspelt: email
        event.data.emial;
        // @ts-expect-error misspelt: email, inside the envelope too
        event.envelope.data.emial;
        // @ts-expect-error an extra envelope field is not typed
        event.envelope.api_version;
        expectTypeOf(rawFields(event.data).emial).toBeUnknown();
        expectTypeOf(rawFields(event.envelope).api_version).toBeUnknown();
      }
    };
    expectTypeOf(handle).toBeFunction();
    // @ts-expect-error no string index on the unknown-event envelope either
    type _Indexed = CrmAnyEnvelope[string];
  });

  it('receiver handlers see the exact data of their event', () => {
    const receiver = createCrmReceiver({ secret: 'whsec_test' });
    receiver.on('deal.won', (event) => {
      expectTypeOf(event.data.value).toEqualTypeOf<number | null>();
      // @ts-expect-error misspelt: value
      event.data.valeu;
    });
  });

  it('an unknown name is refused where a known one is required', () => {
    // @ts-expect-error 'nope' is not a CRM event name
    type _Data = CrmDataOf<'nope'>;
    // @ts-expect-error 'bounced' is a mail event
    type _Event = CrmEventOf<'bounced'>;
    // @ts-expect-error no schema for an unknown name
    crmDataSchemas['deal.closed'];
  });

  it('construct and parse return known | unknown; known narrows', async () => {
    const event = await constructCrmEvent('{}', new Headers(), 'secret');
    expectTypeOf(event).toEqualTypeOf<CrmWebhookEvent>();
    expectTypeOf(parseCrmEvent('', {}, { secretIndex: 0 })).toEqualTypeOf<CrmWebhookEvent>();
    expectTypeOf(event.tenantId).toEqualTypeOf<string>();
    expectTypeOf(event.timestamp).toEqualTypeOf<string>();
    if (!event.known) {
      expectTypeOf(event).toEqualTypeOf<UnknownCrmEvent>();
      expectTypeOf(event.data).toBeUnknown();
      expectTypeOf(event.envelope.tenant_id).toEqualTypeOf<string>();
      return;
    }
    expectTypeOf(event).toEqualTypeOf<CrmEvent>();
    expectTypeOf(event.service).toEqualTypeOf<'crm'>();
  });

  it('the discriminated union schema narrows on event', () => {
    const envelope = crmEnvelopeSchema.parse({});
    if (envelope.event === 'journey.enrolled')
      expectTypeOf(envelope.data.enrollment_id).toEqualTypeOf<string>();
  });
});
