/**
 * The lag's reading of a signed `timestamp` (core/lag.ts): the services' own form read digit by
 * digit agrees with `Date.parse` on every string, in range or not; any other form is `Date.parse`'s.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventTimeOf } from '../../src/core/lag.js';

const pad = (n: number, width: number) => String(n).padStart(width, '0');
/** What `Date.parse` makes of `text`, as eventTimeOf answers it. */
const reference = (text: string) => {
  const at = Date.parse(text);
  return Number.isFinite(at) ? at : undefined;
};

describe('eventTimeOf', () => {
  it('agrees with Date.parse on the services’ form, fields in range and out of it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        fc.integer({ min: 0, max: 25 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 999 }),
        (year, month, day, hour, minute, second, ms) => {
          const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${pad(ms, 3)}Z`;
          expect(eventTimeOf(text)).toBe(reference(text));
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('agrees with Date.parse on any instant written by toISOString', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(0, 0, 1), max: Date.UTC(9999, 11, 31) }), (ms) => {
        const text = new Date(ms).toISOString();
        expect(eventTimeOf(text)).toBe(ms);
      }),
      { numRuns: 5_000 },
    );
  });

  it('agrees with Date.parse on strings of the form’s length with any characters', () => {
    const chars = fc.constantFrom(...'0123456789-:.TZ+ x/'.split(''));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 23 }),
        chars,
        fc.array(chars, { minLength: 24, maxLength: 24 }),
        fc.string(),
        (index, char, random, other) => {
          const changed = '2025-06-02T09:00:00.123Z'.split('');
          changed[index] = char;
          for (const text of [changed.join(''), random.join(''), other])
            expect(eventTimeOf(text)).toBe(reference(text));
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('other forms go to Date.parse; what is not a time string is undefined', () => {
    expect(eventTimeOf('2025-06-02T09:00:00Z')).toBe(Date.UTC(2025, 5, 2, 9));
    expect(eventTimeOf('2025-06-02T11:00:00.000+02:00')).toBe(Date.UTC(2025, 5, 2, 9));
    expect(eventTimeOf('2024-02-29T12:00:00.000Z')).toBe(Date.UTC(2024, 1, 29, 12));
    expect(eventTimeOf('not a time')).toBeUndefined();
    expect(eventTimeOf(1_717_318_800_000)).toBeUndefined();
    expect(eventTimeOf(undefined)).toBeUndefined();
  });
});
