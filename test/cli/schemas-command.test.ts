/**
 * `svc-webhooks schemas`, the built bin on the oldest supported Node: the JSON Schemas and the
 * AsyncAPI document printed or written as files, the same documents the modules build.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventPages } from '../../scripts/docs/events.mjs';
import { asyncApiDocument } from '../../src/cli/asyncapi.js';
import { exampleDeliveries } from '../../src/cli/schema-examples.js';
import { jsonSchemas } from '../../src/json-schemas.js';
import { buildCli, runCli, startExampleApp } from './support/cli.js';

const MAIL_SECRET = 'whsec_cli_schemas_mail_0123456789';
const CRM_SECRET = 'whsec_cli_schemas_crm_0123456789';

let cli: string;
let dir: string;
let app: Server;
let appUrl: string;
const handled: string[] = [];

beforeAll(async () => {
  cli = await buildCli();
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-schemas-'));
  ({ server: app, url: appUrl } = await startExampleApp({
    mailSecret: MAIL_SECRET,
    crmSecret: CRM_SECRET,
    print: (line) => handled.push(line),
  }));
}, 300_000);

afterAll(async () => {
  await new Promise((resolve) => app?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('svc-webhooks schemas', () => {
  it('prints every JSON Schema as one document by default', async () => {
    const run = await runCli(cli, ['schemas']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(jsonSchemas());
  });

  it('writes one file per schema with --out', async () => {
    const out = join(dir, 'json-schema');
    const run = await runCli(cli, ['schemas', '--format', 'json-schema', '--out', out, '--json']);
    expect(run.code).toBe(0);
    const { ok, files } = JSON.parse(run.stdout) as { ok: boolean; files: string[] };
    expect(ok).toBe(true);
    expect(files).toHaveLength(29);
    expect(readdirSync(join(out, 'mail')).sort()).toEqual(
      [...Object.keys(jsonSchemas().mail.payloads), 'headers'].map((n) => `${n}.json`).sort(),
    );
    const read = (file: string) => JSON.parse(readFileSync(join(out, file), 'utf8'));
    expect(read('crm/deal.won.json')).toEqual(jsonSchemas().crm.envelopes['deal.won']);
    expect(read('crm/envelope.json')).toEqual(jsonSchemas().crm.envelope);
    expect(read('mail/headers.json')).toEqual(jsonSchemas().mail.headers);
  });

  it('--format asyncapi: the AsyncAPI document with its signed examples, printed or as asyncapi.json', async () => {
    const expected = asyncApiDocument({ examples: await exampleDeliveries() });
    const printed = await runCli(cli, ['schemas', '--format', 'asyncapi']);
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toEqual(expected);
    const written = await runCli(cli, ['schemas', '--format', 'asyncapi', '--out', join(dir, 'asyncapi')]);
    expect(written.stdout).toBe(`1 file written to ${join(dir, 'asyncapi')}\n  asyncapi.json\n`);
    expect(JSON.parse(readFileSync(join(dir, 'asyncapi', 'asyncapi.json'), 'utf8'))).toEqual(expected);
  });

  it('an unknown format is a usage error (exit 2), nothing written', async () => {
    const run = await runCli(cli, ['schemas', '--format', 'yaml', '--out', join(dir, 'yaml'), '--json']);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout).error.message).toBe('Unknown format "yaml": use json-schema or asyncapi.');
    expect(readdirSync(dir)).not.toContain('yaml');
  });

  it('the send command of every event page works as written, against the Express example', async () => {
    const commands = (await eventPages())
      .map((p) => /^npx svc-webhooks (send .+)$/m.exec(p.markdown)?.[1])
      .filter((c): c is string => c !== undefined);
    expect(commands).toHaveLength(26);
    for (const command of commands) {
      // The page's URL is the Express example's on port 3000: the same paths, on this test's port.
      const args = command.replace('http://127.0.0.1:3000', appUrl).split(' ');
      const env = { SVC_MAIL_WEBHOOK_SECRET: MAIL_SECRET, SVC_CRM_WEBHOOK_SECRET: CRM_SECRET };
      const run = await runCli(cli, args, { env });
      expect([command, run.code, run.stderr]).toEqual([command, 0, '']);
    }
    expect(handled).toHaveLength(26);
  }, 300_000);
});
