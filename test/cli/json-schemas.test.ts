/**
 * The JSON Schemas of `svc-webhooks schemas`, used by a third-party generator as another team would:
 * json-schema-to-typescript turns every schema into TypeScript, and a module assigning every fixture
 * (the signed example deliveries and the fixture factories' payloads, headers included) to its
 * generated type compiles with the TypeScript compiler; a fixture missing a required field or with
 * a wrongly typed one does not. The schemas are as lenient as the zod schemas: no object forbids
 * additional properties.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRM_EVENT_NAMES, MAIL_EVENT_NAMES } from '@svc/webhooks';
import { createFixtures } from '@svc/webhooks/testing';
import { compile, type JSONSchema } from 'json-schema-to-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleDeliveries } from '../../src/cli/schema-examples.js';
import { jsonSchemas } from '../../src/json-schemas.js';
import type { JsonSchema } from '../../src/shared/json-schema.js';

const schemas = jsonSchemas();
const all: JsonSchema[] = [
  schemas.mail.headers,
  ...Object.values(schemas.mail.payloads),
  schemas.crm.headers,
  schemas.crm.envelope,
  ...Object.values(schemas.crm.envelopes),
];
const titleOf = (schema: JsonSchema) => schema.title as string;

let dir: string;
/** Diagnostics of each file of the compiled program, as `line: message`. */
let diagnostics: Map<string, string[]>;

/** `const name: Type = value;`, the value as JSON (what a consumer in any language holds). */
const assign = (name: string, type: string, value: unknown) =>
  `export const ${name}: ${type} = ${JSON.stringify(value, null, 2)};`;

function typeCheck(files: Record<string, string>): Map<string, string[]> {
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  const program = ts.createProgram(
    Object.keys(files).map((file) => join(dir, file)),
    {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      types: [],
      skipLibCheck: true,
    },
  );
  const found = new Map<string, string[]>(Object.keys(files).map((file) => [file, []]));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const file = d.file ? d.file.fileName.slice(dir.length + 1) : '(program)';
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    const list = found.get(file) ?? [];
    list.push(`${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    found.set(file, list);
  }
  return found;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-json-schema-'));
  const generated: string[] = [];
  for (const schema of all) {
    generated.push(
      await compile(schema as JSONSchema, titleOf(schema), { bannerComment: '', format: false }),
    );
  }
  const lines = [`import type * as T from './types.js';`];
  // The signed example deliveries (the AsyncAPI document's examples): body and headers.
  for (const { service, event, headers, payload } of await exampleDeliveries()) {
    const id = `${service}_${event.replace('.', '_')}`;
    const body =
      service === 'mail'
        ? schemas.mail.payloads[event as 'opened']
        : schemas.crm.envelopes[event as 'deal.won'];
    lines.push(assign(`${id}_body`, `T.${titleOf(body)}`, payload));
    lines.push(assign(`${id}_headers`, `T.${service === 'mail' ? 'MailHeaders' : 'CrmHeaders'}`, headers));
    if (service === 'crm') lines.push(assign(`${id}_envelope`, 'T.CrmEnvelope', payload));
  }
  // The fixture factories under other seeds, and one payload carrying a field this version does not know.
  for (const seed of [1, 2, 3]) {
    const fixtures = createFixtures({ seed });
    for (const event of MAIL_EVENT_NAMES) {
      lines.push(
        assign(`mail_${event}_${seed}`, `T.${titleOf(schemas.mail.payloads[event])}`, fixtures.mail(event)),
      );
    }
    for (const event of CRM_EVENT_NAMES) {
      const envelope = fixtures.crmEnvelope(event);
      lines.push(
        assign(
          `crm_${event.replace('.', '_')}_${seed}`,
          `T.${titleOf(schemas.crm.envelopes[event])}`,
          envelope,
        ),
      );
    }
  }
  lines.push(
    assign('extra_field', 'T.MailBouncedPayload', {
      ...createFixtures({ seed: 4 }).mail('bounced'),
      bounce_category: 'hard',
    }),
  );
  const fixtures = createFixtures({ seed: 5 });
  const { provider: _, ...noProvider } = fixtures.mail('bounced');
  const won = fixtures.crmEnvelope('deal.won');
  diagnostics = typeCheck({
    'types.ts': generated.join('\n'),
    'fixtures.ts': lines.join('\n'),
    // Must not compile: a required field left out, a number sent as a string, a header missing.
    'negative.ts': [
      `import type * as T from './types.js';`,
      assign('noProvider', 'T.MailBouncedPayload', noProvider),
      assign('valueAsText', 'T.CrmDealWonEnvelope', { ...won, data: { ...won.data, value: '5000' } }),
      assign('noSignature', 'T.CrmHeaders', {
        'Content-Type': 'application/json',
        'X-Svc-Event': 'deal.won',
        'X-Svc-Delivery': won.id,
        'User-Agent': 'Svc-CRM-Webhook/1.0',
      }),
    ].join('\n'),
  });
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('JSON Schemas through json-schema-to-typescript', () => {
  it('29 schemas: every payload, the CRM envelope and both header sets, draft 2020-12, titled', () => {
    expect(all).toHaveLength(29);
    for (const schema of all) {
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(titleOf(schema)).toMatch(/^(Mail|Crm)[A-Za-z]+$/);
      expect(typeof schema.description).toBe('string');
    }
    expect(new Set(all.map(titleOf)).size).toBe(29);
  });

  it('no object forbids additional properties (the zod schemas keep unknown keys)', () => {
    const closed: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) for (const [i, item] of node.entries()) walk(item, `${path}/${i}`);
      if (typeof node !== 'object' || node === null) return;
      const schema = node as Record<string, unknown>;
      if (schema.type === 'object' && schema.additionalProperties === false) closed.push(path);
      for (const [key, value] of Object.entries(schema)) walk(value, `${path}/${key}`);
    };
    for (const schema of all) walk(schema, titleOf(schema));
    expect(closed).toEqual([]);
  });

  it('the generated types compile, and every fixture compiles against its type', () => {
    expect(diagnostics.get('types.ts')).toEqual([]);
    expect(diagnostics.get('fixtures.ts')).toEqual([]);
  });

  it('a fixture that does not match its type fails to compile', () => {
    const errors = diagnostics.get('negative.ts')!;
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatch(/provider/);
    expect(errors[1]).toMatch(/'string' is not assignable to type 'number'/);
    expect(errors[2]).toMatch(/X-Svc-Signature/);
  });
});
