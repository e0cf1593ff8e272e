/**
 * `wrangler dev` for this repository, which does not install wrangler: bundles the Worker as Wrangler
 * does (esbuild, ES module output, the `workerd` export condition; `@svc/webhooks` resolves to the
 * repository's built dist/) and serves it in workerd through miniflare, without `nodejs_compat`, the
 * secrets of the environment as the Worker's bindings. Elsewhere use `npx wrangler dev` (README.md).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

const bindings: Record<string, string> = {};
for (const name of ['SVC_MAIL_WEBHOOK_SECRET', 'SVC_CRM_WEBHOOK_SECRET']) {
  const value = process.env[name];
  if (!value) {
    console.error(
      `Set ${name} (the webhook's secret; for a local try: export ${name}=$(openssl rand -hex 24)).`,
    );
    process.exit(1);
  }
  bindings[name] = value;
}

const toml = readFileSync(new URL('wrangler.toml', import.meta.url), 'utf8');
const setting = (key: string) => new RegExp(`^${key}\\s*=\\s*"([^"]+)"`, 'm').exec(toml)?.[1] ?? '';
const { outputFiles } = await build({
  entryPoints: [fileURLToPath(new URL(setting('main'), import.meta.url))],
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  conditions: ['workerd', 'worker', 'browser'],
  mainFields: ['browser', 'module', 'main'],
  external: ['cloudflare:*', 'node:*'],
});
const worker = new Miniflare({
  modules: true,
  script: outputFiles[0]!.text,
  compatibilityDate: setting('compatibility_date'),
  bindings,
  host: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 8787),
});
console.log(`Ready on ${await worker.ready}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void worker.dispose().then(() => process.exit(0)));
