/**
 * Dead letters on NATS JetStream are the messages of the dead-letter stream: each holds the job
 * unchanged and why it is there. Listed by sequence without consuming them; re-driven by publishing the
 * job back to its work subject under a new `Nats-Msg-Id`, never the dedup key: that id may still be in
 * the work stream's duplicate window, and JetStream would drop the re-driven job as a duplicate while
 * answering the publish with success.
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { jobFields, jobOfBody } from '../run-and-settle.js';
import { optionsInvalid } from '../worker-checks.js';
import { streamNames } from './streams.js';
import { decodeLetter, fitsPayload } from './subjects.js';

const decoder = new TextDecoder();

/**
 * A message of the dead-letter stream, as {@link listNatsDeadLetters} returns it.
 *
 * @example
 * ```ts
 * const [letter] = await listNatsDeadLetters({ js });
 * console.log(letter?.deliveryId, letter?.reason);
 * ```
 */
export interface NatsDeadLetter {
  /** Its sequence in the dead-letter stream. */
  seq: number;
  /** The subject the job was published on (`webhooks.crm.deal.won`). */
  subject: string;
  /** The job's delivery id, event and dedup key as written (not verified: the worker verifies). */
  deliveryId?: string;
  event?: string;
  dedupKey?: string;
  /** `<code>: <reason>`. */
  reason: string;
  /** Deliveries of the job before it was dead-lettered. */
  attempts: number;
  /**
   * Set when the job was too large to go in the letter (a message within a line of the server's
   * `max_payload`, never one a receiver wrote): it stays in the work stream at this sequence, as long
   * as that stream keeps it (`max_age`).
   */
  kept?: { stream: string; seq: number };
}

/**
 * Options of {@link listNatsDeadLetters} and {@link redriveNatsDeadLetters}.
 *
 * @example
 * ```ts
 * const options: NatsDeadLetterOptions = { js, deadLetterStream: 'WEBHOOKS_DEAD', max: 100 };
 * ```
 */
export interface NatsDeadLetterOptions {
  js: JetStreamClient;
  /** Default `'WEBHOOKS_DEAD'`. */
  deadLetterStream?: string;
  /** As given to `createNatsHandoff`. Default `'webhooks'`. */
  subjectPrefix?: string;
  /** Most letters read. Default 100. */
  max?: number;
}

interface Letter extends NatsDeadLetter {
  /** The job's bytes; undefined when a kept job is no longer in the work stream. */
  job: Uint8Array | undefined;
}

async function readLetters(
  factory: string,
  options: NatsDeadLetterOptions,
): Promise<{ jsm: JetStreamManager; letters: Letter[] }> {
  const { js, max = 100 } = options ?? ({} as NatsDeadLetterOptions);
  const { deadLetterStream } = streamNames(options ?? {});
  if (typeof js?.jetstreamManager !== 'function')
    throw optionsInvalid(factory, 'js must be a JetStream client.');
  if (!Number.isSafeInteger(max) || max < 1)
    throw optionsInvalid(factory, 'max must be a positive whole number.');
  const jsm = await js.jetstreamManager();
  const { state } = await jsm.streams.info(deadLetterStream);
  const letters: Letter[] = [];
  for (
    let seq = state.first_seq;
    seq <= state.last_seq && letters.length < max && state.messages > 0;
    seq++
  ) {
    const stored = await jsm.streams.getMessage(deadLetterStream, { seq }).catch(() => null);
    if (!stored) continue; // deleted (re-driven)
    const { meta, job: carried } = decodeLetter(stored.data);
    const kept =
      meta.kept === true && typeof meta.stream === 'string' && typeof meta.seq === 'number'
        ? { stream: meta.stream, seq: meta.seq }
        : undefined;
    const bytes = kept
      ? (await jsm.streams.getMessage(kept.stream, { seq: kept.seq }).catch(() => null))?.data
      : carried;
    letters.push({
      seq,
      subject: stored.subject.replace(/^([^.]+)-dead\./, '$1.'),
      ...jobFields(jobOfBody(decoder.decode(bytes))),
      reason: typeof meta.reason === 'string' ? meta.reason : 'unknown',
      attempts: typeof meta.attempts === 'number' ? meta.attempts : 0,
      ...(kept ? { kept } : {}),
      job: bytes,
    });
  }
  return { jsm, letters };
}

/**
 * Lists up to `max` dead letters, oldest first, without consuming them.
 *
 * @example
 * ```ts
 * import { listNatsDeadLetters } from '@svc/webhooks/nats';
 *
 * for (const d of await listNatsDeadLetters({ js })) console.log(d.seq, d.deliveryId, d.event, d.reason);
 * ```
 */
export async function listNatsDeadLetters(options: NatsDeadLetterOptions): Promise<NatsDeadLetter[]> {
  const { letters } = await readLetters('listNatsDeadLetters', options);
  return letters.map(({ job: _job, ...letter }) => letter);
}

/**
 * Publishes up to `max` dead letters back to their work subjects and deletes each once JetStream
 * stored it. The `Nats-Msg-Id` is `redrive:<dead-letter stream>:<seq>`: new for each letter (never the
 * dedup key, which may still be inside the work stream's duplicate window), the same for a second
 * re-drive of one letter (a crash before its delete). A re-driven delivery whose handlers completed
 * meanwhile runs nothing (its claim is completed). Resolves with the number re-driven.
 *
 * @example
 * ```ts
 * import { redriveNatsDeadLetters } from '@svc/webhooks/nats';
 *
 * const count = await redriveNatsDeadLetters({ js });
 * ```
 */
export async function redriveNatsDeadLetters(options: NatsDeadLetterOptions): Promise<number> {
  const { jsm, letters } = await readLetters('redriveNatsDeadLetters', options);
  const { deadLetterStream } = streamNames(options);
  let count = 0;
  for (const letter of letters) {
    const msgID = `redrive:${deadLetterStream}:${letter.seq}`;
    // Left in place: a kept job the work stream no longer holds, or one too large to publish again.
    if (!letter.job || !fitsPayload(options.js, letter.job, msgID)) continue;
    await options.js.publish(letter.subject, letter.job, { msgID });
    await jsm.streams.deleteMessage(deadLetterStream, letter.seq);
    count++;
  }
  return count;
}
