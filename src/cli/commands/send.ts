/** `svc-webhooks send <service> <event> --url URL`: one signed delivery (or N) built from the fixtures. */
import type { Command } from 'commander';
import type { CrmEventName } from '../../crm/event-names.js';
import type { MailEventName } from '../../mail/event-names.js';
import { createSignedRequest } from '../../testing/fixtures/signed-request.js';
import { parseEvent, parseNewEvent, parseService } from '../events.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import { type Answer, isSuccess, parseUrl, post } from '../http.js';
import type { Output } from '../output.js';
import { runAction, withJson } from '../run-action.js';
import { resolveSecrets, SECRET_FIX, secretProblem } from '../secrets.js';
import { collectSet, parseSetFields } from '../set-fields.js';
import { visible } from '../visible-text.js';

interface SendOptions {
  url?: string;
  secret?: string;
  set: string[];
  times: string;
  sameId?: boolean;
  deliveryId?: string;
  vendor: string;
  newEvent?: boolean;
}

/** Registers `send`. */
export function sendCommand(program: Command): void {
  withJson(program.command('send'))
    .description('send a signed delivery of an event, built from the fixtures, and print the answer')
    .argument('<service>', 'mail or crm')
    .argument('<event>', 'an event name, e.g. bounced or deal.won')
    .requiredOption('--url <url>', 'where to POST it, e.g. http://127.0.0.1:3000/webhooks/mail')
    .option(
      '--secret <secret>',
      'the webhook secret (default: $SVC_MAIL_WEBHOOK_SECRET / $SVC_CRM_WEBHOOK_SECRET)',
    )
    .option(
      '--set <field=value>',
      'set a payload field (CRM: a data field); repeatable; JSON values',
      collectSet,
      [],
    )
    .option('--times <n>', 'send it n times, each a new delivery (see --same-id)', '1')
    .option('--same-id', 'every time with the same delivery id, like the service retrying')
    .option('--delivery-id <id>', 'the delivery id to use (default: a random UUID)')
    .option('--vendor <word>', 'the word that replaces "Svc" in header names', 'Svc')
    .option(
      '--new-event',
      'an event this version does not know, as a newer service sends it: only the --set fields',
    )
    .action(runAction(send as never));
}

interface Sent extends Answer {
  deliveryId: string;
}

async function send(out: Output, service: string, event: string, options: SendOptions): Promise<ExitCode> {
  const svc = parseService(service);
  const name = options.newEvent ? parseNewEvent(svc, event) : parseEvent(svc, event);
  const url = parseUrl(options.url);
  const given = options.secret === undefined ? undefined : [options.secret];
  const [secret] = resolveSecrets(svc, given);
  // Sent anyway (testing how an app refuses it is legitimate), but said first: every receiver of this
  // package answers such a secret's deliveries 500 secret_invalid, whatever the signature.
  const problem = secretProblem(svc, [secret!], given);
  if (problem) {
    out.note(`${out.color.yellow('warning')} ${problem}: no receiver accepts deliveries signed with it.`);
    out.note(`  fix: ${SECRET_FIX}`);
  }
  const times = Number(options.times);
  if (!Number.isSafeInteger(times) || times < 1 || times > 100_000) {
    throw new CliError(`--times must be a whole number from 1 to 100000 (got ${options.times}).`);
  }
  const fields = parseSetFields(options.set);
  const fixedId = options.deliveryId ?? (options.sameId ? crypto.randomUUID() : undefined);
  const progress = out.progress(`sending ${name}`, times);
  const results: Sent[] = [];
  let unreachable: CliError | undefined;
  for (let i = 0; i < times; i++) {
    const deliveryId = fixedId ?? crypto.randomUUID();
    const common = {
      secret: secret!,
      url,
      deliveryId,
      vendor: options.vendor,
      ...(options.newEvent ? { body: newEventBody(svc, name, deliveryId, fields) } : {}),
    };
    const request =
      svc === 'mail'
        ? await createSignedRequest({
            ...common,
            service: 'mail',
            event: name as MailEventName,
            payload: fields,
          })
        : await createSignedRequest({ ...common, service: 'crm', event: name as CrmEventName, data: fields });
    const body = new Uint8Array(await request.arrayBuffer());
    try {
      const answer = await post(url, Object.fromEntries(request.headers), body);
      results.push({ deliveryId, ...answer });
      if (times === 1 || !process.stderr.isTTY) printAnswer(out, name, { deliveryId, ...answer });
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      unreachable = error;
      break;
    }
    progress.tick();
  }
  progress.done();
  const ok = results.filter((r) => isSuccess(r.status)).length;
  const byStatus: Record<string, number> = {};
  for (const r of results) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  if (out.json) {
    out.result({
      ok: unreachable === undefined && ok === times,
      service: svc,
      event: name,
      url,
      sent: results.length,
      succeeded: ok,
      byStatus,
      results,
      ...(unreachable ? { error: { code: unreachable.code, message: unreachable.message } } : {}),
    });
  } else if (times > 1) {
    const counts = Object.entries(byStatus)
      .map(([status, n]) => `${n} × ${status}`)
      .join(', ');
    out.line(`${results.length} sent: ${ok} succeeded${counts ? ` (${counts})` : ''}`);
  }
  if (unreachable) {
    if (!out.json) {
      out.note(`${out.color.red('error')} ${visible(unreachable.message)}`);
      if (unreachable.fix) out.note(`  fix: ${unreachable.fix}`);
    }
    return unreachable.exitCode;
  }
  return ok === times ? EXIT.ok : EXIT.failed;
}

/**
 * The body of an event this version does not know, as the specs lay every body out: the email
 * payload with `event` first (email-service §6), the CRM envelope with the fields as `data`
 * (crm-service §2). No fixture exists for it: only the `--set` fields.
 */
function newEventBody(
  service: 'mail' | 'crm',
  event: string,
  deliveryId: string,
  fields: Record<string, unknown>,
): string {
  const timestamp = new Date().toISOString();
  if (service === 'mail') return JSON.stringify({ event, timestamp, ...fields });
  return JSON.stringify({ id: deliveryId, event, timestamp, tenant_id: 'tenant_test', data: fields });
}

function printAnswer(out: Output, event: string, sent: Sent): void {
  const status = isSuccess(sent.status)
    ? out.color.green(String(sent.status))
    : out.color.red(String(sent.status));
  out.line(`${status} ${event} ${out.color.dim(`${visible(sent.deliveryId)} ${sent.durationMs} ms`)}`);
  if (sent.body) out.line(visible(sent.body, true));
}
