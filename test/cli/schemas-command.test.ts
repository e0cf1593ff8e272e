/**
 * `svc-webhooks schemas`, the built bin on the oldest supported Node: the JSON Schemas and the
 * AsyncAPI document printed or written as files, the same documents the modules build.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asyncApiDocument } from '../../src/cli/asyncapi.js';
import { jsonSchemas } from '../../src/cli/json-schemas.js';
import { exampleDeliveries } from '../../src/cli/schema-examples.js';
import { buildCli, runCli } from './support/cli.js';

let cli: string;
let dir: string;

beforeAll(async () => {
  cli = await buildCli();
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-schemas-'));
}, 300_000);

afterAll(() => {
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
});
