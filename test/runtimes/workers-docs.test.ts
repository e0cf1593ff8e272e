/**
 * Every ```ts block of README.md, docs/*.md and examples/*\/README.md that names Cloudflare Workers
 * runs VERBATIM in workerd without nodejs_compat, and so does examples/cloudflare-worker: each is
 * bundled as Wrangler bundles it, against the built package, started in miniflare with the secrets as
 * bindings, and sent deliveries signed with node:crypto. A block that names Workers carries the
 * comment `<!-- workerd: mail bounced at /webhooks/mail; crm deal.won at /webhooks/crm -->` right
 * above its fence: the deliveries to send (service, event, path); a block without it fails here.
 * A block that needs bindings this harness does not give (D1, Queues) says which test runs its code
 * in workerd instead: `<!-- workerd: covered by test/handoff/cloudflare-queues.test.ts -->`; the named
 * file must exist.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixtures } from '../../src/testing/fixtures/fixtures.js';
import { buildDist, root } from '../package/dist.js';
import {
  type AppDir,
  bundleWorker,
  createAppDir,
  type RunningWorker,
  startWorker,
} from './support/workers.js';

const SECRETS = {
  SVC_MAIL_WEBHOOK_SECRET: 'whsec_docs_mail_0123456789abcdef0123456789ab',
  SVC_CRM_WEBHOOK_SECRET: 'whsec_docs_crm_0123456789abcdef0123456789abc',
};
const MARKER = /^\s*<!--\s*workerd:(.*?)-->\s*$/;
const FENCE_OPEN = /^\s*```(ts|typescript)(\s.*)?$/;
const NAMES_WORKERS = /Cloudflare|\bWorkers\b|workerd|wrangler/;

interface Route {
  service: 'mail' | 'crm';
  event: string;
  path: string;
}

interface Snippet {
  where: string;
  code: string;
  routes: Route[] | undefined;
  /** The test file that runs this block's code in workerd with the bindings it needs. */
  coveredBy?: string;
}

function markdownFiles(): string[] {
  const examples = readdirSync(join(root, 'examples'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `examples/${entry.name}/README.md`)
    .filter((file) => {
      try {
        readFileSync(join(root, file));
        return true;
      } catch {
        return false;
      }
    });
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs, ...examples];
}

/** Parses a marker's text: `mail bounced at /webhooks/mail; crm deal.won at /webhooks/crm`. */
function routesOf(text: string, where: string): Route[] {
  return text.split(';').map((clause) => {
    const match = /^\s*(mail|crm)\s+(\S+)\s+at\s+(\/\S*)\s*$/.exec(clause);
    if (!match) throw new Error(`${where}: bad workerd marker clause "${clause.trim()}"`);
    return { service: match[1] as Route['service'], event: match[2]!, path: match[3]! };
  });
}

function snippets(): Snippet[] {
  const found: Snippet[] = [];
  for (const file of markdownFiles()) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!FENCE_OPEN.test(lines[i]!)) continue;
      let end = i + 1;
      while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++;
      const where = `${file}:${i + 1}`;
      const marker = i > 0 ? MARKER.exec(lines[i - 1]!) : null;
      const covered = marker ? /^\s*covered by (\S+)/.exec(marker[1]!) : null;
      if (covered) {
        found.push({ where, code: '', routes: undefined, coveredBy: covered[1]! });
      } else {
        found.push({
          where,
          code: lines.slice(i + 1, end).join('\n'),
          routes: marker ? routesOf(marker[1]!, where) : undefined,
        });
      }
      i = end;
    }
  }
  return found;
}

/** A delivery of `route`'s service and event, signed with node:crypto. */
function delivery(route: Route, secret: string): { body: string; headers: Record<string, string> } {
  const fixtures = createFixtures();
  const id = randomUUID();
  const body =
    route.service === 'mail'
      ? JSON.stringify(fixtures.mail(route.event as 'delivered'))
      : JSON.stringify(fixtures.crmEnvelope(route.event as 'deal.won', {}, { id }));
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const headers: Record<string, string> =
    route.service === 'mail'
      ? { 'x-svcmail-event': route.event, 'x-svcmail-id': id, 'x-svcmail-sig': signature }
      : {
          'user-agent': 'Svc-CRM-Webhook/1.0',
          'x-svc-event': route.event,
          'x-svc-delivery': id,
          'x-svc-signature': signature,
        };
  return { body, headers: { 'content-type': 'application/json', ...headers } };
}

async function send(worker: RunningWorker, route: Route, secret: string): Promise<number> {
  const { body, headers } = delivery(route, secret);
  const response = await fetch(new URL(route.path, worker.url), { method: 'POST', body, headers });
  await response.arrayBuffer();
  return response.status;
}

const secretOf = (route: Route) =>
  route.service === 'mail' ? SECRETS.SVC_MAIL_WEBHOOK_SECRET : SECRETS.SVC_CRM_WEBHOOK_SECRET;

/** Valid deliveries are accepted, forged ones refused, and workerd reported no error. */
async function exercise(worker: RunningWorker, routes: readonly Route[]): Promise<void> {
  for (const route of routes) {
    expect(await send(worker, route, secretOf(route)), `${route.service} at ${route.path}`).toBeLessThan(300);
    expect(await send(worker, route, 'whsec_forged_0123456789abcdef0123'), 'forged').toBe(401);
  }
  expect(worker.output()).not.toMatch(/Uncaught|Error|exception/i);
}

let app: AppDir;
beforeAll(async () => {
  app = createAppDir(await buildDist(), 'svc-workers-docs-');
});
afterAll(() => app?.close());

describe('Workers snippets of the README and docs, verbatim in workerd without nodejs_compat', () => {
  const all = snippets();
  const marked = all.filter((snippet) => snippet.routes !== undefined);

  it('every ts block that names Workers is marked to run in workerd', () => {
    const unmarked = all.filter(
      (snippet) => snippet.routes === undefined && NAMES_WORKERS.test(snippet.code),
    );
    expect(unmarked.map((snippet) => snippet.where)).toEqual([]);
    for (const { where, coveredBy } of all) {
      if (coveredBy !== undefined)
        expect(existsSync(join(root, coveredBy)), `${where}: ${coveredBy} does not exist`).toBe(true);
    }
    // The verify snippet of docs/getting-started.md and the two of docs/adapters.md at least.
    expect(marked.length).toBeGreaterThanOrEqual(3);
  });

  it.each(marked.map((snippet) => [snippet.where, snippet] as const))('%s', async (_where, snippet) => {
    const file = join(app.dir, `snippet-${randomUUID()}.ts`);
    writeFileSync(file, snippet.code);
    const worker = await startWorker(await bundleWorker(file, app.dir), SECRETS);
    try {
      await exercise(worker, snippet.routes!);
    } finally {
      await worker.close();
    }
  });
});

describe('examples/cloudflare-worker in workerd without nodejs_compat', () => {
  let script: string;
  let worker: RunningWorker;
  beforeAll(async () => {
    // Copied beside the built package, so `@svc/webhooks` resolves to it as from an app's node_modules.
    cpSync(join(root, 'examples/cloudflare-worker/src'), join(app.dir, 'cloudflare-worker'), {
      recursive: true,
    });
    script = await bundleWorker(join(app.dir, 'cloudflare-worker/index.ts'), app.dir);
    worker = await startWorker(script, SECRETS);
  });
  afterAll(() => worker?.close());

  it('has a wrangler.toml without compatibility flags, pointing at src/index.ts', () => {
    const toml = readFileSync(join(root, 'examples/cloudflare-worker/wrangler.toml'), 'utf8');
    expect(toml).toMatch(/^main = "src\/index\.ts"$/m);
    expect(toml).not.toMatch(/^compatibility_flags/m);
  });

  it('handles both services, prints a line per event, refuses forged and repeated deliveries', async () => {
    const routes: Route[] = [
      { service: 'mail', event: 'bounced', path: '/webhooks/mail' },
      { service: 'crm', event: 'deal.won', path: '/webhooks/crm' },
    ];
    await exercise(worker, routes);
    expect(worker.output()).toContain('"service":"mail","event":"bounced"');
    expect(worker.output()).toContain('"service":"crm","event":"deal.won"');

    // The receivers are created once per isolate: a retry is a duplicate, not a second run.
    const { body, headers } = delivery(routes[0]!, SECRETS.SVC_MAIL_WEBHOOK_SECRET);
    const post = () => fetch(new URL('/webhooks/mail', worker.url), { method: 'POST', body, headers });
    expect((await post()).status).toBe(200);
    expect(await (await post()).json()).toEqual({ ok: true, result: 'duplicate' });
    const id = headers['x-svcmail-id']!;
    expect(worker.output().split(id).length - 1).toBe(1);
    expect((await fetch(new URL('/elsewhere', worker.url), { method: 'POST', body })).status).toBe(404);
  });

  it('answers 500 while a secret is unset, naming no secret (the sender retries)', async () => {
    const unset = await startWorker(script, { SVC_CRM_WEBHOOK_SECRET: SECRETS.SVC_CRM_WEBHOOK_SECRET });
    try {
      const response = await fetch(new URL('/webhooks/mail', unset.url), { method: 'POST', body: '{}' });
      expect(response.status).toBe(500);
      expect(await response.text()).not.toContain('whsec_');
    } finally {
      await unset.close();
    }
  });
});
