import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleConsumer, CONSUMER_CASES, type ConsumerBundle, installConsumer } from './consumer-bundle.js';
import { buildDist, root } from './dist.js';

// What an app's bundler ships for one import of the built package (esbuild, ESM, minified,
// resolved through package.json#exports; test/package/consumer-bundle.ts). The content checks are
// the guard: an import that needs no schema carries no zod, a mail-only app no CRM schema and the
// reverse. The byte budgets are generous ceilings over the sizes measured in docs/benchmarks.md
// (bundle size), there to catch a dependency or a whole service slipping in, not a few hundred bytes.

// zod defines every schema class with its name as a string ("$ZodType", "$ZodObject", …), which
// minification keeps.
const ZOD = '$ZodType';
// Field names only the schemas of one service use (email-service §6 payloads, crm-service §6 data
// and §2 envelope); minification keeps property names.
const MAIL_SCHEMA = ['latency_ms', 'complaint_rate'];
const CRM_SCHEMA = ['deal_id', 'enrollment_id', 'tenant_id'];
// A name of the other service's events: a mail-only app carries not even the CRM event list.
const CRM_EVENT = 'deal.stage_changed';
const MAIL_EVENT = 'billing_threshold_reached';

type Expected = {
  /** Ceiling in bytes of the minified bundle. */
  budget: number;
  /** Whether zod is in the bundle. */
  zod: boolean;
  /** Whether the email service's schemas (and event names) are in it; unchecked when absent. */
  mail?: boolean;
  /** Whether the CRM service's schemas (and event names) are in it; unchecked when absent. */
  crm?: boolean;
};

const KB = 1024;
const EXPECTED: Record<(typeof CONSUMER_CASES)[number]['name'], Expected> = {
  isWebhookError: { budget: 6 * KB, zod: false, mail: false, crm: false },
  toResponse: { budget: 8 * KB, zod: false, mail: false, crm: false },
  createMailReceiver: { budget: 165 * KB, zod: true, mail: true, crm: false },
  createCrmReceiver: { budget: 170 * KB, zod: true, mail: false, crm: true },
  constructMailEvent: { budget: 140 * KB, zod: true, mail: true, crm: false },
  constructCrmEvent: { budget: 145 * KB, zod: true, mail: false, crm: true },
  // Everything: proves the markers above are really in the schemas they stand for.
  'whole root (`import *`)': { budget: 185 * KB, zod: true, mail: true, crm: true },
  './verify': { budget: 12 * KB, zod: false },
  './schemas': { budget: 120 * KB, zod: true, mail: true, crm: false },
  './fetch': { budget: 4 * KB, zod: false },
  './node': { budget: 10 * KB, zod: false },
  './express': { budget: 10 * KB, zod: false },
  './fastify': { budget: 10 * KB, zod: false },
  './next': { budget: 4 * KB, zod: false },
  // ./hono also carries the @hono/node-server body read (its shared deadline timer and the linger).
  './hono': { budget: 10 * KB, zod: false },
  './koa': { budget: 10 * KB, zod: false },
  './nest': { budget: 10 * KB, zod: false },
  './lambda': { budget: 6 * KB, zod: false },
  './redis': { budget: 12 * KB, zod: false },
  './postgres': { budget: 12 * KB, zod: false },
  './sqlite': { budget: 12 * KB, zod: false },
  './testing createVirtualClock': { budget: 6 * KB, zod: false },
  './testing createMailEmitter': { budget: 160 * KB, zod: true },
  // 24: the emulated email API serves its OpenAPI description (/docs/json) and page (/docs).
  './testing/msw': { budget: 24 * KB, zod: false },
  './manage': { budget: 20 * KB, zod: false },
  './bullmq': { budget: 16 * KB, zod: false },
  './pg-boss': { budget: 16 * KB, zod: false },
  './d1': { budget: 10 * KB, zod: false },
  './dynamodb': { budget: 10 * KB, zod: false },
  './cloudflare-queues': { budget: 10 * KB, zod: false },
  // The four lag histograms (bucket boundaries, the event-name bound) brought it from 6.6 to 8.5 KB.
  './otel': { budget: 12 * KB, zod: false },
  './handoff': { budget: 6 * KB, zod: false },
  './sqs': { budget: 24 * KB, zod: false },
  './nats': { budget: 24 * KB, zod: false },
};

let consumer: string;
const bundles = new Map<string, Promise<ConsumerBundle>>();
const bundle = (name: string) => {
  const source = CONSUMER_CASES.find((c) => c.name === name)!.source;
  if (!bundles.has(name)) bundles.set(name, bundleConsumer(consumer, source));
  return bundles.get(name)!;
};

beforeAll(async () => {
  consumer = installConsumer(await buildDist());
});

describe('bundle size of one import (esbuild, ESM, minified)', () => {
  it('covers every subpath of package.json#exports', () => {
    const subpaths: Record<string, string> = JSON.parse(readFileSync(join(root, 'entries.json'), 'utf8'));
    const imported = new Set(
      CONSUMER_CASES.map((c) => /from '@svc\/webhooks(?:\/([\w/-]+))?'/.exec(c.source)![1] ?? '.'),
    );
    expect([...imported].sort()).toEqual(Object.keys(subpaths).sort());
  });

  it.each(CONSUMER_CASES.map((c) => [c.name, EXPECTED[c.name]] as const))(
    '%s: within its budget, zod and the services only where needed',
    async (name, expected) => {
      const { bytes, code } = await bundle(name);
      expect(bytes, `${name} bundles ${bytes} bytes`).toBeLessThanOrEqual(expected.budget);
      expect(code.includes(ZOD), `${name}: zod in the bundle`).toBe(expected.zod);
      if (expected.mail !== undefined) {
        for (const marker of [...MAIL_SCHEMA, MAIL_EVENT])
          expect(code.includes(marker), `${name}: "${marker}" (email service) in the bundle`).toBe(
            expected.mail,
          );
      }
      if (expected.crm !== undefined) {
        for (const marker of [...CRM_SCHEMA, CRM_EVENT])
          expect(code.includes(marker), `${name}: "${marker}" (CRM) in the bundle`).toBe(expected.crm);
      }
    },
  );
});
