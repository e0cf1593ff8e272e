/**
 * The public surface, counted with the TypeScript compiler (what an editor offers a user) over the
 * entries; .ci/run runs the same count over the built `.d.ts`: the root entry stays small enough to hold in one hand,
 * the whole package under a fixed number of names, and nothing deprecated ships.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script shared with .ci/run, which checks the built .d.ts the same way.
import { entryFiles, LIMITS, overLimits, surfaceOf } from '../../scripts/surface.mjs';
import { buildDist } from './dist.js';

interface Surface {
  values: string[];
  types: string[];
}

let dist: string;
let surfaces: Map<string, Surface>;

beforeAll(async () => {
  dist = await buildDist();
  // The source entries export exactly what their built .d.ts do (.ci/run checks those after the build).
  surfaces = surfaceOf(entryFiles());
}, 180_000);

describe('the public surface', () => {
  it('the root entry: at most 30 values and 74 types', () => {
    const rootSurface = surfaces.get('.')!;
    expect(rootSurface.values.length).toBeLessThanOrEqual(30);
    // 74: the types the root's signatures reach are exported (scripts/surface.mjs, LIMITS).
    expect(rootSurface.types.length).toBeLessThanOrEqual(74);
    // What a newcomer meets first is there.
    expect(rootSurface.values).toEqual(
      expect.arrayContaining(['createMailReceiver', 'createCrmReceiver', 'WebhookError', 'toResponse']),
    );
    // No zod schema and no verifier plumbing in the root.
    expect(rootSurface.values.filter((name) => /Schemas?$|^toBytes$|^timingSafeEqual$/.test(name))).toEqual(
      [],
    );
  });

  it('at most the limit of names over all entries (scripts/surface.mjs)', () => {
    const total = [...surfaces.values()].reduce((sum, s) => sum + s.values.length + s.types.length, 0);
    expect(total).toBeLessThanOrEqual(LIMITS.total);
    expect(overLimits(surfaces)).toEqual([]);
  });

  it('one name per concept: one Clock, distinct webhook records, no second name for the dedup key', () => {
    const all = [...surfaces.entries()].flatMap(([subpath, s]) =>
      [...s.values, ...s.types].map((n) => `${subpath}:${n}`),
    );
    expect(
      // One clock interface: the emitters take a `Required<Clock>`; VirtualClock is the Clock a test
      // moves (createVirtualClock's result, with advance and runAll), not a second interface of time.
      all.filter((name) => /:[A-Z]\w*Clock$/.test(name) && !/:(Clock|VirtualClock)$/.test(name)),
    ).toEqual([]);
    // One real clock: createRealClock (the wall clock with timers); no second name for it or its handles.
    expect(all.filter((name) => /systemClock|TimerId|ScaledClock/.test(name))).toEqual([]);
    expect(all.filter((name) => /:(create\w*Clock)$/.test(name)).sort()).toEqual([
      'testing:createRealClock',
      'testing:createVirtualClock',
    ]);
    expect(
      all.filter((name) =>
        /(attemptKey|idempotencyKey|DedupKeyOf|DeliveryKey|boundDedupKey|JobId)/i.test(name),
      ),
    ).toEqual([]);
    expect(all).toContain('testing:MailEmitterWebhook');
    expect(all).toContain('manage:MailWebhook');
    expect(all).not.toContain('testing:MailWebhook');
  });

  it('nothing deprecated ships', () => {
    const deprecated = readdirSync(dist)
      .filter((file) => /\.(d\.c?ts|c?js)$/.test(file))
      .filter((file) => readFileSync(join(dist, file), 'utf8').includes('@deprecated'));
    expect(deprecated).toEqual([]);
  });
});
