/**
 * What `svc-webhooks emulate` prints while it runs: one line per delivery attempt and its answer
 * (wall time, service, event, attempt, delivery id, status, the app's error code, duration, next
 * attempt), or one JSON line each with `--json`. Bounded: an answer's text is cut to one short line.
 */
import type { EmitterReport } from '../../testing/emitter/types.js';
import type { Output } from '../output.js';
import { receiverError } from '../receiver-error.js';
import { SECRET_ENV } from '../secrets.js';
import { jsonText, visible } from '../visible-text.js';
import type { EmulatorState, ShownAttempt } from './state.js';

/** Characters of an answer shown on the terminal (a message, the start of a body, a network error). */
const SHOWN_CHARS = 160;

/** One line of untrusted text: controls escaped, runs of white space made one space, cut. */
function oneLine(text: string, max = SHOWN_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return visible(flat.length > max ? `${flat.slice(0, max)}…` : flat);
}

/** `HH:MM:SS` of a wall-clock ISO time, in the machine's time zone (as a terminal user reads a clock). */
const clockTime = (iso: string): string => new Date(iso).toTimeString().slice(0, 8);

/** `in 1 s`, `in 2 min`: how long in real time until an emulated time. */
function realWait(nextAt: string, state: EmulatorState): string {
  const seconds = Math.max(0, (state.clock.wall(Date.parse(nextAt)) - Date.now()) / 1000);
  return seconds < 90 ? `in ${Math.ceil(seconds)} s` : `in ${Math.round(seconds / 60)} min`;
}

/** Prints each report of the emulator's emitters; returns the listener. */
export function createStreamPrinter(out: Output, state: EmulatorState): (event: EmitterReport) => void {
  const hinted = new Set<string>();
  const hint = (key: string, text: string) => {
    if (hinted.has(key)) return;
    hinted.add(key);
    out.line(out.color.dim(`          ${text}`));
  };
  const c = out.color;

  function attemptLine(event: Extract<EmitterReport, { type: 'attempt' }>): void {
    const a: ShownAttempt = state.shownAttempt(event.attempt);
    const error = a.success ? undefined : receiverError(a.responseBody);
    let answer: string;
    let detail: string | undefined;
    if (a.success) answer = c.green(String(a.statusCode));
    else if (a.statusCode === 0) answer = c.red(`ERR ${oneLine(a.error ?? 'no answer', 80)}`);
    else if (error) {
      answer = c.red(`${a.statusCode} ${oneLine(error.code, 60)}`);
      detail = error.message;
    } else {
      answer = c.red(String(a.statusCode));
      detail = a.responseBody ? `body: ${a.responseBody}` : (a.error ?? undefined);
    }
    const kind = a.kind === 'scheduled' ? '' : ` ${a.kind}`;
    const next = event.delivery.nextAttemptAt
      ? c.dim(`  next ${realWait(event.delivery.nextAttemptAt, state)}`)
      : '';
    out.line(
      `${clockTime(a.wallAt)}  ${event.service.padEnd(4)}  ${visible(event.delivery.event).padEnd(18)}  ${`#${a.attempt}${kind}`.padEnd(8)}  ${c.dim(visible(event.delivery.id))}  ${answer}  ${a.durationMs} ms${next}`,
    );
    if (detail) out.line(c.dim(`          ${oneLine(detail)}`));
    if (error?.code === 'signature_mismatch') {
      hint(
        `signature ${event.service}`,
        `Your app checks another secret than this webhook's: give both the same one (export ${SECRET_ENV[event.service]} before starting the app and the emulator), or start the app with the secret printed above (or the last rotation's).`,
      );
    } else if (a.statusCode === 0 && /ECONNREFUSED/.test(a.error ?? '')) {
      hint(
        'refused',
        `Nothing listens at ${visible(webhookUrl(state, event))}: start your app, then svc-webhooks trigger ${event.service} <event>.`,
      );
    }
  }

  return (event) => {
    if (out.json) {
      process.stdout.write(`${jsonText(jsonLine(event, state))}\n`);
      return;
    }
    if (event.type === 'attempt') attemptLine(event);
    else if (event.type === 'webhook_paused') {
      out.line(
        c.red(
          `paused mail webhook ${visible(event.webhookId)} after ${event.consecutiveFailures} failed deliveries`,
        ),
      );
    } else if (event.type === 'skipped') {
      out.line(
        c.yellow(
          `skipped ${event.service} ${visible(event.event)} for ${visible(event.webhookId)}: ${visible(event.reason)}`,
        ),
      );
    } else if (event.type === 'no_subscriber') {
      out.line(
        c.dim(`no active ${event.service} webhook subscribes to ${visible(event.event)}: nothing sent`),
      );
    }
  };
}

/** The URL a delivery's webhook has now ('' when it was deleted). */
function webhookUrl(state: EmulatorState, event: Extract<EmitterReport, { type: 'attempt' }>): string {
  const emitter = event.service === 'mail' ? state.mail : state.crm;
  try {
    return emitter.getWebhook(event.delivery.webhookId).url;
  } catch {
    return '';
  }
}

/** The `--json` line of a report. */
function jsonLine(event: EmitterReport, state: EmulatorState): Record<string, unknown> {
  const { type, service, at } = event;
  const line: Record<string, unknown> = {
    type,
    service,
    at: new Date(at).toISOString(),
    wallAt: new Date(state.clock.wall(at)).toISOString(),
  };
  if (event.type === 'attempt') {
    const a = state.shownAttempt(event.attempt);
    Object.assign(line, {
      deliveryId: event.delivery.id,
      webhookId: event.delivery.webhookId,
      event: event.delivery.event,
      attempt: a.attempt,
      kind: a.kind,
      attemptedAt: a.attemptedAt,
      statusCode: a.statusCode,
      success: a.success,
      error: a.error,
      errorCode: a.errorCode,
      durationMs: a.durationMs,
      nextAttemptAt: event.delivery.nextAttemptAt,
    });
  } else if (event.type === 'delivery_settled') {
    Object.assign(line, { deliveryId: event.delivery.id, status: event.delivery.status });
  } else if (event.type === 'no_subscriber') {
    Object.assign(line, { event: event.event });
  } else {
    Object.assign(line, { webhookId: event.webhookId });
    if (event.type === 'skipped') Object.assign(line, { event: event.event, reason: event.reason });
  }
  return line;
}
