/**
 * The email API's OpenAPI description served by the emulator (email-service §1: `{base_url}/docs`,
 * JSON at `{base_url}/docs/json`), checked by third parties: @readme/openapi-parser validates it
 * against the OpenAPI 3.1 schema; openapi-typescript generates types from it (at test time, into a
 * temporary folder) and a client on openapi-fetch typed by them registers a webhook, sends its test
 * delivery and lists the deliveries against the running emulator. The generated types and the
 * `./manage` client's (src/manage/mail-types.ts) are type-checked against each other.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { compileErrors, validate } from '@readme/openapi-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulatorServer } from '../../src/cli/emulate/server.js';
import { createEmulatorState } from '../../src/cli/emulate/state.js';
import { createScaledClock } from '../../src/testing/clock/real-clock.js';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

let emulator: Awaited<ReturnType<typeof startEmulatorServer>>;
let clock: ReturnType<typeof createScaledClock>;
let state: ReturnType<typeof createEmulatorState>;
let app: Server;
let appUrl: string;
let dir: string;
let base: string;
const received: string[] = [];

beforeAll(async () => {
  clock = createScaledClock(600);
  state = createEmulatorState(clock, 600);
  emulator = await startEmulatorServer(state, 0);
  base = emulator.address.url.replace(/\/$/, '');
  app = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((done) => app.listen(0, '127.0.0.1', done));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/hooks`;
  dir = await mkdtemp(join(tmpdir(), 'svc-openapi-'));
  // The generated client resolves openapi-fetch as an app would, from a node_modules beside it.
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
});
afterAll(async () => {
  state?.stop();
  clock?.stop();
  await emulator?.close();
  app?.closeAllConnections();
  await new Promise((done) => app?.close(done));
  if (dir) await rm(dir, { recursive: true, force: true });
});

let cached: Record<string, unknown> | undefined;

/** The document, fetched once (the type-checks take seconds: an idle keep-alive socket may be gone). */
async function documentJson(): Promise<Record<string, unknown>> {
  if (cached) return structuredClone(cached);
  const response = await fetch(`${base}/docs/json`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('x-ratelimit-limit')).toBe('500000');
  cached = (await response.json()) as Record<string, unknown>;
  return structuredClone(cached);
}

/** Type-checks `files` (in `dir`) as a strict app would; each diagnostic with its file's name. */
function typeCheck(files: string[]): Array<{ file: string; message: string }> {
  const program = ts.createProgram(
    files.map((file) => join(dir, file)),
    {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: ['node'],
      skipLibCheck: true,
    },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => ({
    file: d.file ? relative(dir, d.file.fileName) : '',
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }));
}

const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './mail-api.js';

const [baseUrl, appUrl] = process.argv.slice(2) as [string, string];
const client = createClient<paths>({ baseUrl, headers: { 'X-API-Key': 'zm_live_test_admin' } });

const created = await client.POST('/api/v1/webhooks', {
  body: { url: appUrl, events: ['delivered', 'bounced'], description: 'generated client' },
});
if (!created.data) throw new Error('create: ' + JSON.stringify(created.error));
const id: string = created.data.id;
const test = await client.POST('/api/v1/webhooks/{id}/test', { params: { path: { id } } });
if (!test.data) throw new Error('test: ' + JSON.stringify(test.error));
const listed = await client.GET('/api/v1/webhooks/{id}/deliveries', {
  params: { path: { id }, query: { limit: 10, success: 'true' } },
});
if (!listed.data) throw new Error('deliveries: ' + JSON.stringify(listed.error));
const refused = await client.GET('/api/v1/webhooks', { headers: { 'X-API-Key': 'zm_live_not_a_key' } });
const code: string | undefined = refused.error?.error.code;
console.log(JSON.stringify({
  webhook: created.data,
  attempts: listed.data.data,
  nextCursor: listed.data.next_cursor,
  refused: { status: refused.response.status, code },
}));
`;

// The answers the emulator sends are values of the ./manage types; those name no field the document
// lacks and require none it leaves optional; the request bodies convert both ways.
const AGREEMENT = `
import type { components } from './mail-api.js';
import type {
  CreateMailWebhook, MailApiKey, MailDeliveryAttempt, MailIdentity, MailWebhook, UpdateMailWebhook,
} from '${join(ROOT, 'src/manage/mail-types.js')}';

type S = components['schemas'];
type Extends<A, B> = [A] extends [B] ? true : false;
type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : K]: T[K] };
type RequiredKeys<T> = { [K in KnownKeys<T>]-?: {} extends Pick<T, K> ? never : K }[KnownKeys<T>];
type Writable<T> = T extends readonly (infer U)[] ? Writable<U>[] : T extends object ? { -readonly [K in keyof T]: Writable<T[K]> } : T;
type Agree<Doc, Ours> = [Extends<Doc, Ours>, Extends<KnownKeys<Ours>, keyof Doc>, Extends<RequiredKeys<Ours>, RequiredKeys<Doc>>];

export const answers: [
  Agree<S['Webhook'], MailWebhook>,
  Agree<S['DeliveryAttempt'], MailDeliveryAttempt>,
  Agree<S['Identity'], MailIdentity>,
  Agree<S['ApiKey'], MailApiKey>,
] = [[true, true, true], [true, true, true], [true, true, true], [true, true, true]];

export const bodies: [
  Extends<Writable<CreateMailWebhook>, S['CreateWebhook']>,
  Extends<S['CreateWebhook'], CreateMailWebhook>,
  Extends<Writable<UpdateMailWebhook>, S['UpdateWebhook']>,
  Extends<S['UpdateWebhook'], UpdateMailWebhook>,
] = [true, true, true, true];
`;

describe('emulate: the email API OpenAPI description', () => {
  it('GET /docs/json is a valid OpenAPI 3.1 document (@readme/openapi-parser)', async () => {
    const document = await documentJson();
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: base }]);
    const result = await validate(structuredClone(document) as never);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    const schemes = (document.components as { securitySchemes: Record<string, unknown> }).securitySchemes;
    expect(schemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
  });

  it('GET /docs is a page without script that links the JSON and lists the routes', async () => {
    const response = await fetch(`${base}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    const html = await response.text();
    expect(html).toContain(`<a href="${base}/docs/json">`);
    expect(html).toContain('<code>/api/v1/webhooks/{id}/deliveries</code>');
    expect(html).not.toMatch(/<script/i);
  });

  it('describes every route the emulated email API serves', async () => {
    const document = (await documentJson()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      ['get', 'post', 'patch', 'delete'].filter((m) => m in item).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'GET /api/status',
        'GET /api/v1/auth/me',
        'GET /api/v1/auth/api-keys',
        'POST /api/v1/auth/api-keys',
        'DELETE /api/v1/auth/api-keys/{id}',
        'GET /api/v1/webhooks',
        'POST /api/v1/webhooks',
        'GET /api/v1/webhooks/{id}',
        'PATCH /api/v1/webhooks/{id}',
        'DELETE /api/v1/webhooks/{id}',
        'POST /api/v1/webhooks/{id}/rotate-secret',
        'GET /api/v1/webhooks/{id}/deliveries',
        'POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/retry',
        'POST /api/v1/webhooks/{id}/test',
      ].sort(),
    );
  });

  /**
   * One program for every generated file (a type-check of the DOM and Node libraries takes seconds):
   * the client, a misuse of it, the agreement with ./manage, and the agreement with a document whose
   * attempt records lack `deliveryId` (which must fail). The diagnostics by file.
   */
  let checked: Promise<Record<string, string[]>> | undefined;
  function checkGenerated(): Promise<Record<string, string[]>> {
    checked ??= (async () => {
      const document = await documentJson();
      await writeFile(join(dir, 'mail-api.ts'), astToString(await openapiTS(document as never)));
      const broken = structuredClone(document) as {
        components: { schemas: Record<string, { properties: object; required: string[] }> };
      };
      const attempt = broken.components.schemas.DeliveryAttempt!;
      attempt.required = attempt.required.filter((name) => name !== 'deliveryId');
      await writeFile(join(dir, 'broken-api.ts'), astToString(await openapiTS(broken as never)));
      await writeFile(join(dir, 'client.ts'), CLIENT);
      // A misuse the generated types refuse: proof that they, not `any`, type the calls.
      await writeFile(
        join(dir, 'misuse.ts'),
        `${CLIENT.split('\n').slice(0, 6).join('\n')}\nawait client.POST('/api/v1/webhooks', { body: { url: 'x', events: ['bounce'] } });\nexport {};\n`,
      );
      await writeFile(join(dir, 'agreement.ts'), AGREEMENT);
      await writeFile(
        join(dir, 'broken-agreement.ts'),
        AGREEMENT.replace("'./mail-api.js'", "'./broken-api.js'"),
      );
      const files = ['client.ts', 'misuse.ts', 'agreement.ts', 'broken-agreement.ts'];
      const byFile: Record<string, string[]> = Object.fromEntries(files.map((f) => [f, []]));
      for (const { file, message } of typeCheck(files)) byFile[file]?.push(message);
      return byFile;
    })();
    return checked;
  }

  it('a client generated by openapi-typescript, on openapi-fetch, registers a webhook and lists its deliveries', async () => {
    const diagnostics = await checkGenerated();
    expect(diagnostics['client.ts']).toEqual([]);
    expect(diagnostics['misuse.ts']!.join('\n')).toContain('"bounce"');

    const js = ts.transpileModule(CLIENT, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    await writeFile(join(dir, 'client.mjs'), js);
    const { stdout } = await run(process.execPath, [join(dir, 'client.mjs'), base, appUrl], { cwd: dir });
    const out = JSON.parse(stdout) as {
      webhook: { id: string; secret: string; status: string };
      attempts: Array<{ webhookId: string; kind: string; statusCode: number; success: boolean }>;
      nextCursor: string | null;
      refused: { status: number; code: string };
    };
    expect(out.webhook.secret).toMatch(/^whsec_/);
    expect(out.webhook.status).toBe('active');
    expect(out.attempts).toHaveLength(1);
    expect(out.attempts[0]).toMatchObject({
      webhookId: out.webhook.id,
      kind: 'test',
      statusCode: 200,
      success: true,
    });
    expect(out.nextCursor).toBeNull();
    expect(out.refused).toEqual({ status: 401, code: 'unauthorized' });
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!)).toMatchObject({ event: 'delivered' });
  });

  it("the generated types and ./manage's agree on webhooks, attempts, identity, keys and request bodies", async () => {
    const diagnostics = await checkGenerated();
    expect(diagnostics['agreement.ts']).toEqual([]);
    // The check can fail: a document that no longer requires deliveryId disagrees with MailDeliveryAttempt.
    expect(diagnostics['broken-agreement.ts']!.length).toBeGreaterThan(0);
  });
});
