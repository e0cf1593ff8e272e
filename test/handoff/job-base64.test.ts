/**
 * The job body's base64: a view into a larger buffer (what a framework's body reader often hands
 * over) encodes only its own bytes, at every length around the padding, and decodes back.
 */
import { Buffer } from 'node:buffer';
import { expect, it } from 'vitest';
import { fromBase64, toBase64 } from '../../src/handoff/job/job-codec.js';

it('encodes exactly the bytes of a view, as node:buffer does, and decodes back', () => {
  const backing = Uint8Array.from({ length: 70_050 }, (_, i) => (i * 37 + 11) & 255);
  for (const length of [0, 1, 2, 3, 4, 199, 200, 65_537]) {
    const view = backing.subarray(7, 7 + length);
    const text = toBase64(view);
    expect(text).toBe(Buffer.from(view).toString('base64'));
    expect(fromBase64(text)).toEqual(new Uint8Array(view));
  }
});
