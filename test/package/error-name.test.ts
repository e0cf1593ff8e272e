import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type * as Root from '../../src/index.js';
import { buildDist } from './dist.js';

type Errors = Pick<typeof Root, 'WebhookError' | 'isWebhookError'>;

let dist: string;
const builds: Record<'ESM' | 'CJS', Errors> = {} as Record<'ESM' | 'CJS', Errors>;
beforeAll(async () => {
  dist = await buildDist();
  builds.ESM = await import(/* @vite-ignore */ pathToFileURL(join(dist, 'index.js')).href);
  builds.CJS = createRequire(join(dist, 'index.cjs'))('./index.cjs');
});

// Loggers (pino, util.inspect, console.error) print the constructor's name: the CJS build once
// named the class `_class` (tsup's CJS pass moved its field initializer into a helper and wrapped
// the class expression), while the ESM build said `WebhookError`.
describe.each(['ESM', 'CJS'] as const)('WebhookError in the %s build', (format) => {
  it('is named WebhookError: the class, its instances and their inspection', () => {
    const { WebhookError } = builds[format];
    const error = new WebhookError('signature_mismatch', 'The signature does not match.');
    expect(WebhookError.name).toBe('WebhookError');
    expect(error.name).toBe('WebhookError');
    expect(error.constructor.name).toBe('WebhookError');
    expect(inspect(error)).toMatch(/^WebhookError: The signature does not match\.\n/);
    expect(String(error)).toBe('WebhookError: The signature does not match.');
  });

  it('is recognised by isWebhookError of the other build (an app can load both copies)', () => {
    const other = builds[format === 'ESM' ? 'CJS' : 'ESM'];
    const error = new builds[format].WebhookError('store_unavailable', 'The store did not answer.');
    expect(other.WebhookError).not.toBe(builds[format].WebhookError);
    expect(other.isWebhookError(error)).toBe(true);
    expect(builds[format].isWebhookError(error)).toBe(true);
  });
});

it('no class of the CJS build is wrapped in a renaming helper', () => {
  const wrapped = readdirSync(dist)
    .filter((file) => file.endsWith('.cjs'))
    .filter((file) => /\(_class\d* = class\b/.test(readFileSync(join(dist, file), 'utf8')));
  expect(wrapped).toEqual([]);
});
