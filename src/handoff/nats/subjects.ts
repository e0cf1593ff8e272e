/**
 * Subjects of the NATS JetStream hand-off: `<prefix>.<service>.<event>` for jobs (`webhooks.crm.deal.won`)
 * and `<prefix>-dead.<service>.<event>` for dead letters, so one stream per prefix holds every service's
 * jobs and consumers filter by service.
 */

/**
 * The shortest work-stream duplicate window a worker starts with: 3 minutes, above the email
 * service's retry span (attempts at once, after ~1 and ~2 minutes, each up to 10 s: email-service §6
 * rule 4) and the CRM's (3 s, crm-service §6 rule 5), with room for "about". docs/handoff.md.
 */
export const MIN_DUPLICATE_WINDOW_MS = 180_000;

/** A subject token of `value`: characters NATS treats specially (space, `*`, `>`) become `_`. */
const token = (value: string): string =>
  value.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.|\.$/g, '_') || '_';

/** The subject a job of `service` and `event` is published on. */
export const jobSubject = (prefix: string, service: string, event: string): string =>
  `${prefix}.${token(service)}.${token(event)}`;

/** The subject its dead letter is published on. */
export const deadLetterSubject = (prefix: string, service: string, event: string): string =>
  `${prefix}-dead.${token(service)}.${token(event)}`;

/** What a dead letter says about its job (the first line of the letter). */
export interface DeadLetterMeta {
  /** `<code>: <reason>`. */
  reason: string;
  /** Deliveries of the job before it was dead-lettered. */
  attempts: number;
  /** The work stream and the job's sequence in it. */
  stream: string;
  seq: number;
  /** The job did not fit the letter: it stays in the work stream at `seq`. */
  kept?: true;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NEWLINE = 0x0a;

/**
 * A dead letter's bytes: `meta` as one line of JSON (JSON.stringify writes no raw newline), a
 * newline, then the job's bytes unchanged: no escaping or base64, so a letter is its job plus one
 * bounded line.
 */
export function encodeLetter(meta: DeadLetterMeta, job: Uint8Array = new Uint8Array(0)): Uint8Array {
  const line = encoder.encode(`${JSON.stringify(meta)}\n`);
  const data = new Uint8Array(line.length + job.length);
  data.set(line);
  data.set(job, line.length);
  return data;
}

/** The meta line (what of it parses) and the job's bytes of a letter. */
export function decodeLetter(data: Uint8Array): { meta: Partial<DeadLetterMeta>; job: Uint8Array } {
  const end = data.indexOf(NEWLINE);
  let meta: Partial<DeadLetterMeta> = {};
  try {
    const parsed = JSON.parse(decoder.decode(data.subarray(0, end < 0 ? data.length : end))) as unknown;
    if (typeof parsed === 'object' && parsed !== null) meta = parsed as Partial<DeadLetterMeta>;
  } catch {
    // listed with what is known
  }
  return { meta, job: end < 0 ? new Uint8Array(0) : data.subarray(end + 1) };
}

/** NATS's default `max_payload`, used when the client does not say the server's. */
const DEFAULT_MAX_PAYLOAD = 1_048_576;

/**
 * Whether `data` published with the `Nats-Msg-Id` `id` fits the server's `max_payload` (headers
 * count: `NATS/1.0\r\nNats-Msg-Id: <id>\r\n\r\n`). The server's value is read from the client's
 * connection when it exposes it (`jetstream(nc)` does), else NATS's default.
 */
export function fitsPayload(js: object, data: Uint8Array, id: string): boolean {
  const info = (js as { nc?: { info?: { max_payload?: unknown } } }).nc?.info;
  const max = typeof info?.max_payload === 'number' ? info.max_payload : DEFAULT_MAX_PAYLOAD;
  return data.length + encoder.encode(`NATS/1.0\r\nNats-Msg-Id: ${id}\r\n\r\n`).length <= max;
}
