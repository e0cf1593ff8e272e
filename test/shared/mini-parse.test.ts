import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { globalConfig } from 'zod/v4/core';
import { crmParseSchemas } from '../../src/crm/parse-schemas.js';
import { mailParseSchemas } from '../../src/mail/parse-schemas.js';
import { crmAnyEnvelopeSchema, crmEnvelopeSchemas, mailPayloadSchemas } from '../../src/schemas.js';
import { parseWithMini } from '../../src/shared/mini-parse.js';
import { invalidPayload } from '../../src/shared/parse-json.js';
import { CRM_CASES, envelope } from '../crm/fixtures.js';
import { MAIL_CASES } from '../mail/fixtures.js';

// The receivers parse with the zod/mini build of the schemas; `@svc/webhooks/schemas` exports the
// full-zod build of the same definitions. Users must not see a difference: same verdict, same parsed
// value, same issues (paths, codes, messages), same invalid_payload message, and a cause that is a
// full-zod `ZodError`.

const WRONG_VALUES: unknown[] = [
  null,
  42,
  -1.5,
  '',
  'text',
  'no-at-sign',
  '2024-05-01 10:00:00',
  true,
  [],
  ['a', 1],
  {},
  { nested: 1 },
];

/** Every field removed, then set to each wrong value; whole-value breakage; every field broken at once. */
function corpus(sample: Record<string, unknown>): unknown[] {
  const bad: unknown[] = [sample, null, [], 'text', 7, {}];
  for (const field of Object.keys(sample)) {
    const { [field]: _removed, ...without } = sample;
    bad.push(without);
    for (const value of WRONG_VALUES) bad.push({ ...sample, [field]: value });
  }
  for (const value of WRONG_VALUES) {
    bad.push(Object.fromEntries(Object.keys(sample).map((field) => [field, value])));
  }
  return bad;
}

type Parser = { safeParse(value: unknown): z.ZodSafeParseResult<unknown> };

function expectSameResult(full: Parser, mini: z.core.$ZodType, value: unknown): boolean {
  const expected = full.safeParse(value);
  const actual = parseWithMini<unknown>(mini, value);
  expect(actual.success).toBe(expected.success);
  if (expected.success && actual.success) {
    expect(actual.data).toEqual(expected.data);
    return true;
  }
  if (expected.success || actual.success) return false;
  expect(actual.error).toBeInstanceOf(z.ZodError);
  expect(actual.error).toBeInstanceOf(Error);
  expect(actual.error.issues).toEqual(expected.error.issues);
  expect(actual.error.message).toBe(expected.error.message);
  const error = actual.error as z.ZodError;
  expect(error.name).toBe('ZodError');
  expect(error.flatten()).toEqual(expected.error.flatten());
  expect(error.format()).toEqual(expected.error.format());
  expect(invalidPayload('payload', actual.error).message).toBe(
    invalidPayload('payload', expected.error).message,
  );
  return false;
}

describe('zod/mini parse and full zod give users the same result', () => {
  it('covers all 26 events', () => {
    expect(new Set(MAIL_CASES.map((c) => c.name)).size + new Set(CRM_CASES.map((c) => c.name)).size).toBe(26);
    expect([...mailParseSchemas().keys()].sort()).toEqual(Object.keys(mailPayloadSchemas).sort());
    expect([...crmParseSchemas().byName.keys()].sort()).toEqual(Object.keys(crmEnvelopeSchemas).sort());
  });

  it.each(MAIL_CASES)('mail $name: bad payloads', ({ name, sample }) => {
    const mini = mailParseSchemas().get(name)!;
    const values = corpus(sample);
    const refused = values.filter((value) => !expectSameResult(mailPayloadSchemas[name], mini, value));
    expect(refused.length).toBeGreaterThan(Object.keys(sample).length);
  });

  it.each(CRM_CASES)('crm $name: bad data and bad envelopes', ({ name, data }) => {
    const mini = crmParseSchemas().byName.get(name)!;
    const values = [
      ...corpus(data).map((bad) => envelope(name, bad)),
      ...corpus(envelope(name, data)).filter(
        (bad) => typeof bad === 'object' && bad !== null && (bad as { event?: unknown }).event === name,
      ),
    ];
    const refused = values.filter((value) => !expectSameResult(crmEnvelopeSchemas[name], mini, value));
    expect(refused.length).toBeGreaterThan(Object.keys(data).length);
  });

  it('crm: the envelope of an unknown event', () => {
    const { anyEnvelope } = crmParseSchemas();
    const sample = envelope('deal.split', { anything: true });
    const refused = corpus(sample).filter(
      (value) => !expectSameResult(crmAnyEnvelopeSchema, anyEnvelope, value),
    );
    expect(refused.length).toBeGreaterThan(Object.keys(sample).length);
  });

  it("messages follow the app's zod locale, and are English when none is set", () => {
    const bounced = { ...MAIL_CASES.find((c) => c.name === 'bounced')!.sample, to: 7, provider: null };
    const mini = mailParseSchemas().get('bounced')!;
    const english = mailPayloadSchemas.bounced.safeParse(bounced).error!.issues.map((i) => i.message);
    const saved = globalConfig.localeError;
    try {
      z.config(z.locales.de());
      expectSameResult(mailPayloadSchemas.bounced, mini, bounced);
      const german = parseWithMini(mini, bounced);
      expect(german.success || german.error.issues.map((i) => i.message)).not.toEqual(english);

      // zod/mini alone installs no messages: the parse still gives full zod's English ones.
      globalConfig.localeError = undefined;
      const bare = parseWithMini(mini, bounced);
      expect(bare.success || bare.error.issues.map((i) => i.message)).toEqual(english);
    } finally {
      globalConfig.localeError = saved;
    }
  });
});
