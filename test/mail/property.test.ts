import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constructCrmEvent, constructMailEvent, isWebhookError, MAIL_EVENT_NAMES } from '../../src/index.js';
import { SECRET, sign } from './fixtures.js';

// Any signed body and any headers end in an event or a WebhookError, never another exception.
async function settles(run: () => Promise<unknown>) {
  try {
    await run();
  } catch (error) {
    expect(isWebhookError(error), String(error)).toBe(true);
  }
}

const name = fc.oneof(fc.constantFrom(...MAIL_EVENT_NAMES, 'deal.won', 'contact.created'), fc.string());
const body = fc.oneof(
  fc.json(),
  fc.string(),
  fc
    .record({ event: name, client_id: fc.anything(), id: fc.anything(), data: fc.anything() })
    .map((v) => JSON.stringify(v)),
);

describe('parsers never throw anything but WebhookError', () => {
  it('mail', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.option(name), fc.option(fc.string()), async (text, event, id) => {
        const headers: Record<string, string> = { 'x-svcmail-sig': sign(text) };
        if (event !== null) headers['x-svcmail-event'] = event;
        if (id !== null) headers['x-svcmail-id'] = id;
        await settles(() => constructMailEvent(text, headers, SECRET));
      }),
      { numRuns: 300 },
    );
  });

  it('crm', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.option(name), async (text, event) => {
        const headers = new Headers({ 'x-svc-signature': sign(text) });
        if (event !== null) headers.set('x-svc-event', event.replace(/[^\x20-\x7e]/g, ''));
        await settles(() => constructCrmEvent(text, headers, SECRET));
      }),
      { numRuns: 300 },
    );
  });
});
