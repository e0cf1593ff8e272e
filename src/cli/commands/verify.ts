/** `svc-webhooks verify --service S [--headers FILE] [BODY_FILE|-]`: checks a captured delivery. */
import type { Command } from 'commander';
import { isWebhookError } from '../../core/errors.js';
import { constructCrmEvent } from '../../crm/construct-event.js';
import { constructMailEvent } from '../../mail/construct-event.js';
import { verifySignature } from '../../verify/verify-signature.js';
import { parseService, type Service } from '../events.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { FIXES } from '../fixes.js';
import type { Output } from '../output.js';
import { readBytes, readHeadersFile } from '../read-input.js';
import { runAction, withJson } from '../run-action.js';
import { resolveSecrets } from '../secrets.js';
import { collectSet } from '../set-fields.js';

interface VerifyOptions {
  service?: string;
  secret: string[];
  headers?: string;
  vendor: string;
}

/** Registers `verify`. */
export function verifyCommand(program: Command): void {
  withJson(program.command('verify'))
    .description('check a captured delivery: which secret matched, or the exact error code and its fix')
    .argument('[body]', 'the body file, exactly as received; - or nothing for stdin', '-')
    .requiredOption('--service <service>', 'mail or crm')
    .option(
      '--secret <secret>',
      'a secret to try (repeatable during a rotation; default from the environment)',
      collectSet,
      [],
    )
    .option('--headers <file>', 'the request headers: a JSON object or "Name: value" lines')
    .option('--vendor <word>', 'the word that replaces "Svc" in header names', 'Svc')
    .action(runAction(verify as never));
}

function signatureHeader(service: Service, vendor: string): string {
  return service === 'mail' ? `X-${vendor}MAIL-Sig` : `X-${vendor}-Signature`;
}

async function verify(out: Output, bodyPath: string, options: VerifyOptions): Promise<ExitCode> {
  const service = parseService(options.service);
  const secrets = resolveSecrets(service, options.secret);
  const headers = options.headers ? await readHeadersFile(options.headers) : new Headers();
  const body = await readBytes(bodyPath, 'body');
  const headerName = signatureHeader(service, options.vendor);
  const signature = headers.get(headerName);

  const checked = await verifySignature(body, signature ?? undefined, secrets);
  if (!checked.ok) return failure(out, checked.code, checked.message, { bytes: body.byteLength });

  // The signature matched: the rest of the checks a receiver makes (JSON, event, delivery id, schema).
  const prefix = options.vendor;
  try {
    const event =
      service === 'mail'
        ? await constructMailEvent(body, headers, secrets, {
            headerNames: {
              signature: headerName,
              event: `X-${prefix}MAIL-Event`,
              deliveryId: `X-${prefix}MAIL-Id`,
            },
          })
        : await constructCrmEvent(body, headers, secrets, {
            headerNames: {
              signature: headerName,
              event: `X-${prefix}-Event`,
              deliveryId: `X-${prefix}-Delivery`,
            },
          });
    const matched = { index: checked.secretIndex + 1, of: secrets.length };
    if (out.json) {
      out.result({
        ok: true,
        service,
        secret: matched,
        event: event.name,
        deliveryId: event.deliveryId,
        bytes: body.byteLength,
      });
    } else {
      out.line(
        `${out.color.green('ok')} signature matched secret #${matched.index} of ${matched.of}` +
          (matched.index > 1 ? ' (an older secret: finish the rotation)' : ''),
      );
      out.line(`   ${service} ${event.name}, delivery ${event.deliveryId}, ${body.byteLength} bytes`);
    }
    return EXIT.ok;
  } catch (error) {
    if (!isWebhookError(error)) throw error;
    return failure(out, error.code, error.message, {
      bytes: body.byteLength,
      signature: `matched secret #${checked.secretIndex + 1} of ${secrets.length}`,
    });
  }
}

function failure(out: Output, code: string, message: string, extra: Record<string, unknown>): ExitCode {
  const fix = FIXES[code];
  if (out.json) {
    out.result({ ok: false, error: { code, message, ...(fix ? { fix } : {}) }, ...extra });
  } else {
    if (typeof extra.signature === 'string')
      out.line(`${out.color.green('ok')} signature ${extra.signature}`);
    out.line(`${out.color.red(code)} ${message}`);
    if (fix) out.line(`  fix: ${fix}`);
  }
  return EXIT.failed;
}
