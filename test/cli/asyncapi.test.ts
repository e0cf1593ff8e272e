/**
 * The AsyncAPI 3.0 document of `svc-webhooks schemas --format asyncapi`, read by the AsyncAPI
 * project's own parser (@asyncapi/parser, its spectral rules included): no error diagnostic, and a
 * broken document does get one. Each example's signature is checked with node:crypto.
 */
import { createHmac } from 'node:crypto';
import { Parser } from '@asyncapi/parser';
import { CRM_EVENT_NAMES, MAIL_EVENT_NAMES } from '@svc/webhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { type AsyncApiDocument, asyncApiDocument } from '../../src/cli/asyncapi.js';
import { EXAMPLE_SECRET, exampleDeliveries } from '../../src/cli/schema-examples.js';

// Spectral's severities: 0 error, 1 warning, 2 information, 3 hint.
const ERROR = 0;

let document: AsyncApiDocument;
const parser = new Parser();
const errorsOf = async (doc: unknown) =>
  (await parser.parse(JSON.stringify(doc))).diagnostics
    .filter((d) => d.severity === ERROR)
    .map((d) => `${d.code}: ${d.message} at ${d.path.join('/')}`);

beforeAll(async () => {
  document = asyncApiDocument({ examples: await exampleDeliveries() });
});

// The parser runs its spectral rules over the whole document: seconds each on a loaded 2-core machine.
describe('the AsyncAPI document', { timeout: 120_000 }, () => {
  it('parses with no error diagnostic, one message per event of both services', async () => {
    const { document: parsed, diagnostics } = await parser.parse(JSON.stringify(document));
    expect(diagnostics.filter((d) => d.severity === ERROR)).toEqual([]);
    expect(parsed).toBeDefined();
    expect(parsed!.version()).toBe('3.0.0');
    const names = parsed!
      .messages()
      .all()
      .map((m) => m.name());
    expect(names.sort()).toEqual([...MAIL_EVENT_NAMES, ...CRM_EVENT_NAMES].sort());
    // The application receives: one `receive` operation per service, over HTTP POST, secured by the signature.
    const operations = parsed!.operations().all();
    expect(operations.map((o) => [o.id(), o.action(), o.channels().all()[0]?.address()])).toEqual([
      ['receiveMailEvents', 'receive', '/webhooks/mail'],
      ['receiveCrmEvents', 'receive', '/webhooks/crm'],
    ]);
    for (const operation of operations) {
      expect(operation.messages().all()).toHaveLength(13);
      expect(operation.bindings().get('http')?.value()).toMatchObject({ method: 'POST' });
      const [scheme] = operation.security()[0]!.all();
      expect(scheme!.scheme().json()).toMatchObject({ type: 'httpApiKey', in: 'header' });
    }
  });

  it('describes each service’s headers, signature header and delivery id', async () => {
    const { document: parsed } = await parser.parse(JSON.stringify(document));
    const message = (name: string) =>
      parsed!
        .messages()
        .all()
        .find((m) => m.name() === name)!;
    const headersOf = (name: string) => [
      message(name).headers()!.required(),
      message(name).correlationId()!.location(),
    ];
    expect(headersOf('bounced')).toEqual([
      ['X-SvcMAIL-Event', 'X-SvcMAIL-Sig', 'X-SvcMAIL-Id'],
      '$message.header#/X-SvcMAIL-Id',
    ]);
    expect(headersOf('deal.won')).toEqual([
      ['Content-Type', 'X-Svc-Signature', 'X-Svc-Event', 'X-Svc-Delivery', 'User-Agent'],
      '$message.payload#/id',
    ]);
    const schemes = parsed!
      .components()
      .securitySchemes()
      .all()
      .map((s) => [s.id(), s.name()]);
    expect(schemes).toEqual([
      ['mailSignature', 'X-SvcMAIL-Sig'],
      ['crmSignature', 'X-Svc-Signature'],
    ]);
  });

  it('carries one signed example per event, its signature the HMAC of its body (node:crypto)', () => {
    const components = document.components as { messages: Record<string, { examples?: unknown[] }> };
    const messages = Object.entries(components.messages);
    expect(messages).toHaveLength(26);
    for (const [key, message] of messages) {
      const [example] = message.examples as Array<{ headers: Record<string, string>; payload: unknown }>;
      const signature = key.startsWith('mail.')
        ? example!.headers['X-SvcMAIL-Sig']
        : example!.headers['X-Svc-Signature'];
      const body = JSON.stringify(example!.payload);
      expect(signature, key).toBe(
        `sha256=${createHmac('sha256', EXAMPLE_SECRET).update(body).digest('hex')}`,
      );
    }
  });

  it('the same bytes on every run', async () => {
    expect(asyncApiDocument({ examples: await exampleDeliveries() })).toEqual(document);
  });

  it('a broken document gets error diagnostics: the check can fail', async () => {
    const broken = structuredClone(document) as unknown as {
      components: { messages: Record<string, unknown> };
    };
    delete broken.components.messages['mail.bounced'];
    expect((await errorsOf(broken)).join('\n')).toMatch(/bounced/);
    const wrongAction = structuredClone(document) as unknown as {
      operations: Record<string, { action: string }>;
    };
    wrongAction.operations.receiveMailEvents!.action = 'consume';
    expect(await errorsOf(wrongAction)).not.toEqual([]);
  });
});
