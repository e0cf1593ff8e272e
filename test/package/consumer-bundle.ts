import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import { root } from './dist.js';

/** A consumer's bundle of one import: its size and its text. */
export type ConsumerBundle = { bytes: number; code: string };

/**
 * Installs the build output `dist` as `node_modules/@svc/webhooks` of a throwaway consumer project
 * (package.json and dist/ only, as the tarball has them), so imports resolve through
 * `package.json#exports` exactly as an app's bundler resolves them. The project sits under the
 * repository's node_modules, so zod and the other dependencies resolve from there, as installed.
 * Returns the project directory.
 */
export function installConsumer(dist: string): string {
  const dir = join(`${dist}-consumer`);
  const pkgDir = join(dir, 'node_modules', '@svc', 'webhooks');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(pkgDir, { recursive: true });
  writeFileSync(join(pkgDir, 'package.json'), readFileSync(join(root, 'package.json')));
  cpSync(dist, join(pkgDir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "name": "consumer", "type": "module", "private": true }\n');
  return dir;
}

/**
 * The typical Worker of docs/bundling.md: both receivers behind the fetch adapter. `from` maps the
 * package's specifiers (the installed package by default; src/ files for a build from the sources).
 */
export function workerSource(from = { root: '@svc/webhooks', fetch: '@svc/webhooks/fetch' }): string {
  return `
import { createCrmReceiver, createMailReceiver } from '${from.root}';
import { createFetchHandler } from '${from.fetch}';
export default {
  fetch: createFetchHandler((env) => ({
    '/webhooks/mail': createMailReceiver({ secret: env.SVC_MAIL_WEBHOOK_SECRET }),
    '/webhooks/crm': createCrmReceiver({ secret: env.SVC_CRM_WEBHOOK_SECRET }),
  })),
};`;
}

/** How Wrangler bundles a Worker: esbuild, ESM, minified, its conditions, `node:` modules external. */
export const WRANGLER_BUILD = {
  bundle: true,
  format: 'esm',
  minify: true,
  platform: 'neutral',
  mainFields: ['module', 'main'],
  conditions: ['workerd', 'worker', 'browser', 'import'],
  target: 'es2022',
  external: ['node:*'],
} as const satisfies BuildOptions;

/**
 * Bundles `source` (an app's module, e.g. `import { isWebhookError } from '@svc/webhooks'; …`) the
 * way an app bundler ships it: ESM, minified, tree-shaken, for the browser-neutral platform with
 * `node:` modules and the optional peers left external, every package resolved from the consumer
 * project (`installConsumer`).
 */
export async function bundleConsumer(consumer: string, source: string): Promise<ConsumerBundle> {
  const result = await build({
    stdin: { contents: source, resolveDir: consumer, loader: 'js', sourcefile: 'app.js' },
    bundle: true,
    format: 'esm',
    minify: true,
    treeShaking: true,
    platform: 'neutral',
    // `neutral` reads no package.json main fields by default; the `import` condition is what an
    // ESM app bundler picks from `exports`.
    mainFields: ['module', 'main'],
    conditions: ['import'],
    target: 'es2022',
    // node: modules and the optional peers are the app's own; zod is bundled, as the app's bundler does.
    external: [
      'node:*',
      'msw',
      'fastify',
      'express',
      'next',
      'ioredis',
      'redis',
      'pg',
      'bullmq',
      'pg-boss',
      '@aws-sdk/client-dynamodb',
      '@aws-sdk/client-sqs',
      '@nats-io/jetstream',
      '@opentelemetry/api',
    ],
    write: false,
    logLevel: 'silent',
    nodePaths: [join(root, 'node_modules')],
  });
  const code = result.outputFiles[0]!.text;
  return { bytes: Buffer.byteLength(code), code };
}

/**
 * One app's import per case: a line an app writes, bundled alone. `export … from` keeps the import
 * alive through tree-shaking exactly as a use in the app would.
 */
export const CONSUMER_CASES = [
  { name: 'isWebhookError', source: "export { isWebhookError } from '@svc/webhooks';" },
  { name: 'toResponse', source: "export { toResponse } from '@svc/webhooks';" },
  { name: 'createMailReceiver', source: "export { createMailReceiver } from '@svc/webhooks';" },
  { name: 'createCrmReceiver', source: "export { createCrmReceiver } from '@svc/webhooks';" },
  { name: 'constructMailEvent', source: "export { constructMailEvent } from '@svc/webhooks';" },
  { name: 'constructCrmEvent', source: "export { constructCrmEvent } from '@svc/webhooks';" },
  { name: 'whole root (`import *`)', source: "export * as all from '@svc/webhooks';" },
  { name: './verify', source: "export * as verify from '@svc/webhooks/verify';" },
  { name: './schemas', source: "export { mailPayloadSchemas } from '@svc/webhooks/schemas';" },
  { name: './fetch', source: "export { createFetchHandler } from '@svc/webhooks/fetch';" },
  { name: './node', source: "export { createNodeListener } from '@svc/webhooks/node';" },
  { name: './express', source: "export { createExpressMiddleware } from '@svc/webhooks/express';" },
  { name: './fastify', source: "export { createFastifyPlugin } from '@svc/webhooks/fastify';" },
  { name: './next', source: "export { createNextRouteHandlers } from '@svc/webhooks/next';" },
  { name: './hono', source: "export { createHonoMiddleware } from '@svc/webhooks/hono';" },
  { name: './koa', source: "export { createKoaMiddleware } from '@svc/webhooks/koa';" },
  { name: './nest', source: "export { createNestHandler } from '@svc/webhooks/nest';" },
  { name: './lambda', source: "export { createLambdaHandler } from '@svc/webhooks/lambda';" },
  { name: './redis', source: "export { createRedisStore } from '@svc/webhooks/redis';" },
  { name: './postgres', source: "export { createPostgresStore } from '@svc/webhooks/postgres';" },
  { name: './sqlite', source: "export { createSqliteStore } from '@svc/webhooks/sqlite';" },
  {
    name: './testing createVirtualClock',
    source: "export { createVirtualClock } from '@svc/webhooks/testing';",
  },
  {
    name: './testing createMailEmitter',
    source: "export { createMailEmitter } from '@svc/webhooks/testing';",
  },
  { name: './testing/msw', source: "export { mailApiHandlers } from '@svc/webhooks/testing/msw';" },
  { name: './manage', source: "export { createMailClient } from '@svc/webhooks/manage';" },
  { name: './bullmq', source: "export { createBullmqHandoff } from '@svc/webhooks/bullmq';" },
  { name: './pg-boss', source: "export { createPgBossHandoff } from '@svc/webhooks/pg-boss';" },
  { name: './d1', source: "export { createD1Store } from '@svc/webhooks/d1';" },
  { name: './dynamodb', source: "export { createDynamoDBStore } from '@svc/webhooks/dynamodb';" },
  {
    name: './cloudflare-queues',
    source: "export * as queues from '@svc/webhooks/cloudflare-queues';",
  },
  { name: './otel', source: "export { createOtelTelemetry } from '@svc/webhooks/otel';" },
  { name: './handoff', source: "export { jobAction } from '@svc/webhooks/handoff';" },
  { name: './sqs', source: "export { createSqsHandoff, createSqsWorker } from '@svc/webhooks/sqs';" },
  { name: './nats', source: "export { createNatsHandoff, createNatsWorker } from '@svc/webhooks/nats';" },
] as const;
