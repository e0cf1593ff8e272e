/**
 * The receiver side of the NATS JetStream hand-off: one publish per delivery on
 * `webhooks.<service>.<event>`, with `Nats-Msg-Id` = the job's dedup key. JetStream stores a second
 * message with that id only after the stream's duplicate window, and says so in its ack.
 */
import type { JetStreamClient } from '@nats-io/jetstream';
import type { EnqueueResult, HandoffJob, HandoffTarget } from '../job/types.js';
import { optionsInvalid } from '../worker-checks.js';
import { jobSubject } from './subjects.js';

const FACTORY = 'createNatsHandoff';

/** Bytes of a message kept for the job's fields other than the body. */
const JOB_FIELDS_BYTES = 16_384;

const encoder = new TextEncoder();

/**
 * Options of {@link createNatsHandoff}.
 *
 * @example
 * ```ts
 * import { jetstream } from '@nats-io/jetstream';
 *
 * const options: NatsHandoffOptions = { js: jetstream(nc), subjectPrefix: 'webhooks' };
 * ```
 */
export interface NatsHandoffOptions {
  /** Your JetStream client (`jetstream(nc)` of `@nats-io/jetstream` 3). */
  js: Pick<JetStreamClient, 'publish'>;
  /** First token of the subjects: jobs go to `<prefix>.<service>.<event>`. Default `'webhooks'`. */
  subjectPrefix?: string;
  /**
   * The server's `max_payload`, in bytes. Default 1 048 576 (NATS's default). The largest delivery
   * body accepted is (this − 16 KiB) × 3/4: 756 KiB at the default.
   */
  maxPayloadBytes?: number;
  /** How long a delivery waits for JetStream's ack, in ms; then 503 with `Retry-After`. Default 2 000. */
  enqueueTimeoutMs?: number;
}

/**
 * A receiver's `handoff` target on NATS JetStream.
 *
 * @example
 * ```ts
 * const handoff: NatsHandoff = createNatsHandoff({ js });
 * console.log(handoff.maxBodyBytes);
 * ```
 */
export interface NatsHandoff extends HandoffTarget {
  readonly enqueueTimeoutMs: number;
  readonly maxBodyBytes: number;
}

/**
 * Hand-off mode on NATS JetStream: a verified delivery is published as the job (JSON) and
 * acknowledged once JetStream stored it; {@link createNatsWorker} runs the handlers. A copy of a
 * delivery inside the stream's duplicate window stores nothing and is answered `duplicate`.
 *
 * @example
 * ```ts
 * import { jetstream } from '@nats-io/jetstream';
 * import { connect } from '@nats-io/transport-node';
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createNatsHandoff } from '@svc/webhooks/nats';
 *
 * const nc = await connect({ servers: process.env.NATS_URL! });
 * const receiver = createMailReceiver({
 *   secret: process.env.SVC_MAIL_WEBHOOK_SECRET!,
 *   handoff: createNatsHandoff({ js: jetstream(nc) }),
 * });
 * ```
 */
export function createNatsHandoff(options: NatsHandoffOptions): NatsHandoff {
  const {
    js,
    subjectPrefix = 'webhooks',
    maxPayloadBytes = 1_048_576,
    enqueueTimeoutMs = 2_000,
  } = options ?? ({} as NatsHandoffOptions);
  if (typeof js?.publish !== 'function')
    throw optionsInvalid(FACTORY, 'js must be a JetStream client (jetstream(nc) of @nats-io/jetstream).');
  if (typeof subjectPrefix !== 'string' || !/^[A-Za-z0-9_-]+$/.test(subjectPrefix))
    throw optionsInvalid(FACTORY, 'subjectPrefix must be one subject token (letters, digits, _ and -).');
  if (!Number.isSafeInteger(maxPayloadBytes) || maxPayloadBytes < 65_536 || maxPayloadBytes > 67_108_864)
    throw optionsInvalid(FACTORY, 'maxPayloadBytes must be a whole number from 65 536 to 67 108 864.');
  return {
    enqueueTimeoutMs,
    maxBodyBytes: Math.floor(((maxPayloadBytes - JOB_FIELDS_BYTES) * 3) / 4),
    async enqueue(job: HandoffJob): Promise<EnqueueResult> {
      const data = encoder.encode(JSON.stringify(job));
      if (data.length > maxPayloadBytes)
        throw new Error(
          `The hand-off job is ${data.length} bytes; this NATS server takes ${maxPayloadBytes}.`,
        );
      const ack = await js.publish(jobSubject(subjectPrefix, job.service, job.event), data, {
        msgID: job.dedupKey,
        timeout: enqueueTimeoutMs,
      });
      return ack.duplicate ? 'duplicate' : 'enqueued';
    },
  };
}
