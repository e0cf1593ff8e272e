import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAIL_CASES, SECRET } from '../mail/fixtures.js';
import { installConsumer } from './consumer-bundle.js';
import { buildDist } from './dist.js';

// Node loads the receivers' parts of zod from the package's own zod-kit-node file (package.json
// `#zod-kit`, tsup.config.ts), not from the app's `zod`: what users see must still be full zod's.
// A fresh process with the package installed parses bad payloads through `constructMailEvent`
// before anything loads full zod (so the English messages are the kit's own), then compares them
// with `@svc/webhooks/schemas` (full zod) and follows the app's `z.config` locale.

const WRONG = [null, 42, '', 'no-at-sign', '2024-05-01 10:00:00', true, ['a'], { nested: 1 }];

const cases = MAIL_CASES.flatMap(({ name, sample }) => [
  { name, payload: sample },
  // The body's `event` field is checked against the header before the schema runs.
  ...Object.keys(sample)
    .filter((field) => field !== 'event')
    .flatMap((field) => {
      const { [field]: _removed, ...without } = sample;
      return [without, ...WRONG.map((value) => ({ ...sample, [field]: value }))].map((payload) => ({
        name,
        payload,
      }));
    }),
]);

const SCRIPT = `
import { createHmac } from 'node:crypto';
import * as module from 'node:module';
const kit = [];
module.registerHooks?.({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    if (specifier === '#zod-kit') kit.push(resolved.url.split('/').pop());
    return resolved;
  },
});
const { readFileSync } = await import('node:fs');
const { constructMailEvent } = await import('@svc/webhooks');
const cases = JSON.parse(readFileSync('./zod-kit-cases.json', 'utf8'));
const parse = async ({ name, payload }) => {
  const body = JSON.stringify(payload);
  const headers = {
    'x-svcmail-sig': 'sha256=' + createHmac('sha256', ${JSON.stringify(SECRET)}).update(body).digest('hex'),
    'x-svcmail-id': 'dlv_kit',
    'x-svcmail-event': name,
  };
  try {
    await constructMailEvent(body, headers, ${JSON.stringify(SECRET)});
    return { ok: true };
  } catch (error) {
    return { code: error.code, message: error.message, issues: error.cause?.issues, cause: error.cause };
  }
};
const actual = [];
for (const c of cases) actual.push(await parse(c));
const z = await import('zod');
const { mailPayloadSchemas } = await import('@svc/webhooks/schemas');
const expected = cases.map(({ name, payload }) => {
  const result = mailPayloadSchemas[name].safeParse(payload);
  return result.success ? { ok: true } : { issues: result.error.issues };
});
const zodErrors = actual.filter((a) => a.cause !== undefined).map((a) => a.cause instanceof z.ZodError);
z.config(z.locales.de());
const bad = cases.find((c, i) => actual[i].issues !== undefined);
const german = await parse(bad);
const germanExpected = mailPayloadSchemas[bad.name].safeParse(bad.payload).error.issues;
for (const a of actual) delete a.cause;
delete german.cause;
console.log(JSON.stringify({ kit, actual, expected, zodErrors, german, germanExpected }));
`;

type Result = { ok?: true; code?: string; message?: string; issues?: { message: string }[] };
let run: {
  kit: string[];
  actual: Result[];
  expected: Result[];
  zodErrors: boolean[];
  german: Result;
  germanExpected: { message: string }[];
};

beforeAll(async () => {
  const consumer = installConsumer(await buildDist());
  writeFileSync(join(consumer, 'zod-kit-cases.json'), JSON.stringify(cases));
  writeFileSync(join(consumer, 'zod-kit-check.mjs'), SCRIPT);
  run = JSON.parse(
    execFileSync(process.execPath, ['zod-kit-check.mjs'], { cwd: consumer, encoding: 'utf8' }),
  );
}, 120_000);

describe("the receivers' zod kit under Node", () => {
  it('is the built-in one', () => {
    // registerHooks exists from Node 22.15; on Node 20 the resolution itself is not observed.
    if ('registerHooks' in (process.getBuiltinModule?.('node:module') ?? {}))
      expect([...new Set(run.kit)]).toEqual(['zod-kit-node.js']);
  });

  it('refuses what full zod refuses, with the same issues and messages, as a ZodError', () => {
    expect(run.actual).toHaveLength(cases.length);
    const refused = run.expected.filter((e) => e.issues !== undefined).length;
    expect(refused).toBeGreaterThan(MAIL_CASES.length * 4);
    for (const [i, actual] of run.actual.entries()) {
      const expected = run.expected[i]!;
      if (expected.ok) {
        expect(actual).toEqual({ ok: true });
        continue;
      }
      expect(actual.code).toBe('invalid_payload');
      expect(actual.issues).toEqual(expected.issues);
    }
    expect(run.zodErrors).toHaveLength(refused);
    expect(run.zodErrors.every(Boolean)).toBe(true);
  });

  it("follows the app's zod locale", () => {
    expect(run.german.issues).toEqual(run.germanExpected);
    expect(run.german.issues!.map((i) => i.message)).not.toEqual(
      run.expected.find((e) => e.issues)!.issues!.map((i) => i.message),
    );
  });
});
