/**
 * `svc-webhooks verify`: checks a saved delivery (a body file and its headers, or the lines of a
 * capture file) and prints which secret matched, or the exact error code and its fix.
 */
import type { Command } from 'commander';
import { parseCaptures } from '../capture-file.js';
import { checkDelivery, type DeliveryCheck } from '../check-delivery.js';
import { parseService } from '../events.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import type { Output } from '../output.js';
import { readBytes, readHeadersFile } from '../read-input.js';
import { runAction, withJson } from '../run-action.js';
import { usableSecrets } from '../secrets.js';
import { collectSet } from '../set-fields.js';
import { visible } from '../visible-text.js';

interface VerifyOptions {
  service?: string;
  secret: string[];
  headers?: string;
  capture?: string;
  line?: string;
  vendor: string;
}

/** Registers `verify`. */
export function verifyCommand(program: Command): void {
  withJson(program.command('verify'))
    .description('check a captured delivery: which secret matched, or the exact error code and its fix')
    .argument('[body]', 'the body file, exactly as received; - or nothing for stdin', '-')
    .option('--service <service>', 'mail or crm (read from the capture with --capture)')
    .option(
      '--secret <secret>',
      'a secret to try (repeatable during a rotation; default from the environment)',
      collectSet,
      [],
    )
    .option('--headers <file>', 'the request headers: a JSON object or "Name: value" lines')
    .option('--capture <file>', 'check the deliveries of a capture file (NDJSON) instead of a body file')
    .option('--line <n>', 'with --capture: only the capture on this line')
    .option('--vendor <word>', 'the word that replaces "Svc" in header names', 'Svc')
    .action(runAction(verify as never));
}

async function verify(out: Output, bodyPath: string, options: VerifyOptions): Promise<ExitCode> {
  if (options.capture) return verifyCaptures(out, options.capture, options);
  const service = parseService(options.service);
  const secrets = usableSecrets(service, options.secret);
  const headers = options.headers ? await readHeadersFile(options.headers) : new Headers();
  const body = await readBytes(bodyPath, 'body');
  const result = await checkDelivery(service, secrets, headers, body, options.vendor);
  if (out.json) out.result({ service, ...result });
  else print(out, service, result);
  return result.ok ? EXIT.ok : EXIT.failed;
}

async function verifyCaptures(out: Output, path: string, options: VerifyOptions): Promise<ExitCode> {
  let captures = parseCaptures(new TextDecoder().decode(await readBytes(path, 'capture file')), path);
  if (options.line !== undefined) {
    captures = captures.filter((c) => c.line === Number(options.line));
    if (captures.length === 0)
      throw new CliError(`${path}: no capture on line ${options.line}.`, undefined, 'capture_invalid');
  }
  const results = [];
  for (const capture of captures) {
    const service = options.service ? parseService(options.service) : capture.service;
    const secrets = usableSecrets(service, options.secret);
    const result = await checkDelivery(
      service,
      secrets,
      new Headers(capture.headers),
      capture.body,
      options.vendor,
    );
    results.push({ line: capture.line, service, ...result });
    if (!out.json) {
      out.line(out.color.dim(`line ${capture.line} (${service}, received ${visible(capture.receivedAt)})`));
      print(out, service, result);
    }
  }
  const ok = results.every((r) => r.ok);
  out.result({ ok, results });
  return ok ? EXIT.ok : EXIT.failed;
}

function print(out: Output, service: string, result: DeliveryCheck): void {
  const c = out.color;
  if (result.secret) {
    const { index, of } = result.secret;
    out.line(
      `${c.green('ok')} signature matched secret #${index} of ${of}${index > 1 ? ' (an older secret: finish the rotation)' : ''}`,
    );
  }
  if (result.ok) {
    out.line(
      `   ${service} ${visible(result.event)}, delivery ${visible(result.deliveryId)}, ${result.bytes} bytes`,
    );
    return;
  }
  out.line(`${c.red(result.error.code)} ${visible(result.error.message)}`);
  if (result.error.fix) out.line(`  fix: ${result.error.fix}`);
}
