/**
 * core/drift.ts: the paths of a parsed payload its schema does not know, over the receivers' own
 * schemas (zod/mini) and schemas of every kind they use; names only, and bounded whatever a signed body
 * holds.
 */

import { describe, expect, it } from 'vitest';
import { array, looseObject, nullable, optional, record, string, union, unknown } from 'zod/mini';
import { UNKNOWN_EVENT_DRIFT, unknownPaths } from '../../src/core/drift.js';
import { rememberDrift } from '../../src/core/drift-log.js';
import { crmDrift } from '../../src/crm/parse-schemas.js';
import { mailDrift } from '../../src/mail/parse-schemas.js';

const delivered = {
  event: 'delivered',
  client_id: 'client_1',
  message_id: 'msg_1',
  to: 'ana@example.com',
  provider: 'gmail',
  timestamp: '2024-05-01T10:00:00.123Z',
};

describe('unknownPaths', () => {
  it('a payload of known fields only: no path', () => {
    expect(mailDrift({ known: true, name: 'delivered', payload: delivered })).toEqual([]);
  });

  it('new fields of an email-service payload, by name, never their values', () => {
    const payload = { ...delivered, tier: 'gold-secret', routing: { pool: 'p1', zone: 'eu' } };
    const drift = mailDrift({ known: true, name: 'delivered', payload });
    expect(drift).toEqual(['tier', 'routing']);
    expect(JSON.stringify(drift)).not.toContain('gold-secret');
  });

  it('a CRM envelope: new envelope and data fields; record values and union options are known', () => {
    const envelope = {
      id: '7f1c1c7e-1b1b-4b5b-9c9c-1d1d1d1d1d1d',
      event: 'contact.updated',
      timestamp: '2024-05-01T10:00:00.000Z',
      tenant_id: 'tenant_1',
      region: 'eu',
      data: { id: 'c_1', fields: { email: 'new@example.com' }, source: 'import' },
    };
    expect(crmDrift({ known: true, name: 'contact.updated', envelope })).toEqual(['region', 'data.source']);
    const { region: _region, ...known } = envelope;
    const list = { ...known, data: { id: 'c_1', fields: ['email'] } };
    expect(crmDrift({ known: true, name: 'contact.updated', envelope: list })).toEqual([]);
  });

  it('an event this version does not know is the one path ""', () => {
    expect(mailDrift({ known: false, name: 'warmed_up', payload: delivered })).toBe(UNKNOWN_EVENT_DRIFT);
    expect(crmDrift({ known: false, name: 'ticket.opened', envelope: {} })).toEqual(['']);
  });

  it('arrays collapse to items[], records to map.*, optional and nullable are looked through', () => {
    const schema = looseObject({
      items: array(looseObject({ sku: string() })),
      map: record(string(), looseObject({ n: string() })),
      maybe: optional(nullable(looseObject({ a: string() }))),
      either: union([looseObject({ a: string() }), looseObject({ b: string() })]),
      free: unknown(),
    });
    const value = {
      items: [
        { sku: 'a', size: 1 },
        { sku: 'b', size: 2, colour: 'red' },
      ],
      map: { x: { n: '1', extra: true } },
      maybe: { a: 'a', more: 1 },
      either: { b: 'b', c: 1 },
      free: { anything: { at: 'all' } },
    };
    expect(unknownPaths(schema, value)).toEqual([
      'items[].size',
      'items[].colour',
      'map.*.extra',
      'maybe.more',
      'either.c',
    ]);
    expect(unknownPaths(schema, { ...value, maybe: null, items: [] })).not.toContain('maybe.more');
  });

  it('an own "__proto__" or "constructor" key is a field like any other', () => {
    const schema = looseObject({ a: string() });
    expect(unknownPaths(schema, JSON.parse('{"a":"x","__proto__":{"b":1},"constructor":1}'))).toEqual([
      '__proto__',
      'constructor',
    ]);
  });

  it('bounded: 64 paths per delivery, 8 levels deep, keys cut to 64 characters', () => {
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, i]));
    const paths = unknownPaths(looseObject({}), wide);
    expect(paths).toHaveLength(64);
    expect(paths[63]).toBe('f63');

    type Nest = { n: Nest } | { n?: undefined; x: number };
    const nestSchema = (depth: number): ReturnType<typeof looseObject> =>
      depth === 0 ? looseObject({}) : looseObject({ n: nestSchema(depth - 1) });
    let deep: Nest = { x: 1 };
    for (let i = 0; i < 12; i++) deep = { n: deep };
    // Known down to depth 12; the unknown `x` at depth 12 is below the bound, so not looked at.
    expect(unknownPaths(nestSchema(12), deep)).toEqual([]);
    let shallow: Nest = { x: 1 };
    for (let i = 0; i < 8; i++) shallow = { n: shallow };
    expect(unknownPaths(nestSchema(8), shallow)).toEqual([`${'n.'.repeat(8)}x`]);

    const [long] = unknownPaths(looseObject({}), { ['k'.repeat(5_000)]: 1 });
    expect(long!.length).toBeLessThan(100);
    expect(long!.startsWith('k'.repeat(64))).toBe(true);
  });
});

describe('rememberDrift', () => {
  it('new once, then seen; past 1,000 triples in the process, full and not remembered', () => {
    expect(rememberDrift('unit', 'e', 'p')).toBe('new');
    expect(rememberDrift('unit', 'e', 'p')).toBe('seen');
    let last: string | undefined;
    for (let i = 0; i < 1_100; i++) last = rememberDrift('unit', 'e', `p${i}`);
    expect(last).toBe('full');
    expect(rememberDrift('unit', 'e', 'p1050')).toBe('full');
    expect(rememberDrift('unit', 'e', 'p')).toBe('seen');
  });
});
