/**
 * `svc-webhooks schemas [--format json-schema|asyncapi] [--out DIR]`: the JSON Schemas of both
 * services' deliveries, or one AsyncAPI 3.0 document of both with signed examples; printed, or
 * written as files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { jsonSchemas } from '../../json-schemas.js';
import { asyncApiDocument } from '../asyncapi.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import type { Output } from '../output.js';
import { runAction, withJson } from '../run-action.js';
import { exampleDeliveries } from '../schema-examples.js';

const FORMATS = ['json-schema', 'asyncapi'] as const;

/** Registers `schemas`. */
export function schemasCommand(program: Command): void {
  withJson(program.command('schemas'))
    .description(
      'print or write the JSON Schemas of every event, or an AsyncAPI 3.0 document of both services',
    )
    .option('--format <format>', 'json-schema or asyncapi', 'json-schema')
    .option('--out <dir>', 'write files into this folder instead of printing one document')
    .action(runAction(schemas as never));
}

async function schemas(out: Output, options: { format: string; out?: string }): Promise<ExitCode> {
  if (!(FORMATS as readonly string[]).includes(options.format)) {
    throw new CliError(`Unknown format "${options.format}": use json-schema or asyncapi.`);
  }
  const documents =
    options.format === 'asyncapi'
      ? { 'asyncapi.json': asyncApiDocument({ examples: await exampleDeliveries() }) }
      : schemaFiles();
  if (options.out === undefined) {
    // The document is the output in both modes, as `fixtures` prints its payload.
    const only = options.format === 'asyncapi' ? documents['asyncapi.json'] : jsonSchemas();
    process.stdout.write(`${JSON.stringify(only, null, 2)}\n`);
    return EXIT.ok;
  }
  const files = Object.keys(documents);
  for (const [file, document] of Object.entries(documents)) {
    const path = join(options.out, file);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
  }
  out.result({ ok: true, format: options.format, out: options.out, files });
  out.line(`${files.length} ${files.length === 1 ? 'file' : 'files'} written to ${options.out}`);
  for (const file of files) out.line(`  ${file}`);
  return EXIT.ok;
}

/** Every JSON Schema as a file: `mail/headers.json`, `mail/bounced.json`, `crm/envelope.json`, `crm/deal.won.json`… */
function schemaFiles(): Record<string, unknown> {
  const { mail, crm } = jsonSchemas();
  const files: Record<string, unknown> = { 'mail/headers.json': mail.headers };
  for (const [name, schema] of Object.entries(mail.payloads)) files[`mail/${name}.json`] = schema;
  Object.assign(files, { 'crm/headers.json': crm.headers, 'crm/envelope.json': crm.envelope });
  for (const [name, schema] of Object.entries(crm.envelopes)) files[`crm/${name}.json`] = schema;
  return files;
}
