/**
 * The NATS JetStream worker: a durable pull consumer on `<prefix>.<service>.>` whose messages run
 * through `receiver.runJob` and are settled through {@link jobAction}: acked, nak'ed with a delay (the
 * retry backoff; JetStream counts it as a delivery), or published to the dead-letter stream and
 * terminated. A running message is kept from other workers with `working()` every third of the
 * consumer's `ack_wait`. `deliveryCount` is the attempt, `max_deliver` the attempts.
 */
import { AckPolicy, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';
import type { WebhookError } from '../../shared/errors.js';
import type { HandoffRunner } from '../job/types.js';
import type { JobAction } from '../job-action.js';
import { jobOfBody, type LoopJob, letterReason, type Settled } from '../run-and-settle.js';
import {
  checkHandlerBudget,
  checkRunner,
  optionsInvalid,
  positiveIntegers,
  signalNames,
} from '../worker-checks.js';
import { createWorkerLoop } from '../worker-loop.js';
import { checkStreams, NANOS, streamNames } from './streams.js';
import { type DeadLetterMeta, deadLetterSubject, encodeLetter, fitsPayload } from './subjects.js';

const FACTORY = 'createNatsWorker';
const decoder = new TextDecoder();

/**
 * Options of {@link createNatsWorker}.
 *
 * @example
 * ```ts
 * const options: NatsWorkerOptions = { js, receiver, stream: 'WEBHOOKS', concurrency: 8 };
 * ```
 */
export interface NatsWorkerOptions {
  /** Your JetStream client (`jetstream(nc)`). */
  js: JetStreamClient;
  /** The receiver whose `.on(...)` handlers run the jobs, with a shared dedup store. */
  receiver: HandoffRunner;
  /** The work stream (subjects `<prefix>.>`, a duplicate window of 3 minutes or more). Default `'WEBHOOKS'`. */
  stream?: string;
  /** The dead-letter stream (subjects `<prefix>-dead.>`). Default `'WEBHOOKS_DEAD'`. */
  deadLetterStream?: string;
  /** As given to `createNatsHandoff`. Default `'webhooks'`. */
  subjectPrefix?: string;
  /** The durable consumer's name, created when missing. Default `'webhooks-<service>'`. */
  durable?: string;
  /** `max_deliver` of a consumer the worker creates. Default 10. */
  maxDeliver?: number;
  /** `ack_wait` of a consumer the worker creates, in ms. Default 30 000. */
  ackWaitMs?: number;
  /** Messages run at once. Default 4. */
  concurrency?: number;
  /** Handler time budget per run, in ms. Default the receiver's `leaseMs` − 1 s; below `ack_wait`. */
  timeoutMs?: number;
  /** Delay of the first retry, in ms; doubled each attempt, at most 10 minutes. Default 1 000. */
  backoffMs?: number;
  /** Delay of a message whose claim another run holds, in ms. Default 5 000. */
  busyDelayMs?: number;
  /** On shutdown, time allowed to running messages before their `signal` aborts, in ms. Default 10 000. */
  shutdownTimeoutMs?: number;
  /** Signals that stop the worker gracefully. Default `['SIGTERM', 'SIGINT']`; `[]` to call `stop()` yourself. */
  signals?: readonly NodeJS.Signals[];
  /** Called after a signal stopped the worker: drain your connection here (`nc.drain()`). */
  onShutdown?: () => unknown;
}

/**
 * A running NATS JetStream hand-off worker.
 *
 * @example
 * ```ts
 * const worker = await createNatsWorker({ js, receiver }).start();
 * await worker.stop();
 * ```
 */
export interface NatsWorker {
  /** Checks the streams (`options_invalid` for a duplicate window under 3 minutes), creates the consumer if missing, starts. */
  start(): Promise<NatsWorker>;
  /** Stops pulling, waits up to `shutdownTimeoutMs` for running messages, then aborts and naks them. */
  stop(): Promise<void>;
}

interface NatsJob extends LoopJob {
  readonly message: JsMsg;
}

/**
 * Runs hand-off jobs from NATS JetStream through `receiver.runJob`.
 *
 * @example
 * ```ts
 * import { jetstream } from '@nats-io/jetstream';
 * import { connect } from '@nats-io/transport-node';
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createNatsWorker } from '@svc/webhooks/nats';
 *
 * const nc = await connect({ servers: process.env.NATS_URL! });
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, dedup })
 *   .on('bounced', async (event) => suppress(event.payload.to));
 * await createNatsWorker({ js: jetstream(nc), receiver, onShutdown: () => nc.drain() }).start();
 * ```
 */
export function createNatsWorker(options: NatsWorkerOptions): NatsWorker {
  const {
    js,
    receiver,
    maxDeliver = 10,
    ackWaitMs = 30_000,
    concurrency = 4,
    timeoutMs,
    backoffMs = 1_000,
    busyDelayMs = 5_000,
    shutdownTimeoutMs = 10_000,
    signals = ['SIGTERM', 'SIGINT'],
    onShutdown,
  } = options ?? ({} as NatsWorkerOptions);
  const names = streamNames(options ?? {});
  const { stream, subjectPrefix } = names;
  if (typeof js?.consumers?.get !== 'function')
    throw optionsInvalid(FACTORY, 'js must be a JetStream client.');
  checkRunner(FACTORY, receiver);
  positiveIntegers(FACTORY, {
    maxDeliver,
    ackWaitMs,
    concurrency,
    timeoutMs,
    backoffMs,
    busyDelayMs,
    shutdownTimeoutMs,
  });
  signalNames(FACTORY, 'signals', signals);
  const durable = options.durable ?? `webhooks-${receiver.service}`;
  // biome-ignore lint/suspicious/noConfusingVoidType: the JetStream client's own return type
  let messages: { close(): Promise<void | Error> } | undefined;
  let pulling: Promise<void> | undefined;
  let attempts = maxDeliver;
  let leaseMs = ackWaitMs;

  async function deadLetter(message: JsMsg, error: WebhookError): Promise<void> {
    const [, service = 'unknown', ...event] = message.subject.split('.');
    const meta: DeadLetterMeta = {
      reason: letterReason(error),
      attempts: message.info.deliveryCount,
      stream,
      seq: message.seq,
    };
    // The work stream's sequence as the id: a second publish of this letter (a crash before term) is dropped.
    const id = `dead:${stream}:${message.seq}`;
    const whole = encodeLetter(meta, message.data);
    // A job within a line of max_payload (only a message no receiver wrote) stays where it is, named.
    const data = fitsPayload(js, whole, id) ? whole : encodeLetter({ ...meta, kept: true });
    await js.publish(deadLetterSubject(subjectPrefix, service, event.join('.') || 'unknown'), data, {
      msgID: id,
    });
    // No reason: nats-server before 2.10 ignores a `+TERM <reason>`, and the message would stay unsettled.
    message.term();
  }

  async function settle({ message, attempt }: NatsJob, action: JobAction): Promise<Settled> {
    if (action.type === 'done') {
      await message.ackAck();
      return 'done';
    }
    if (action.type === 'dead-letter') {
      await deadLetter(message, action.error);
      return 'dead-lettered';
    }
    // Not settled on a failure above: JetStream delivers it again after ack_wait.
    message.nak(
      action.type === 'delay' ? action.ms : Math.min(600_000, backoffMs * 2 ** Math.max(0, attempt - 1)),
    );
    return 'retried';
  }

  const loop = createWorkerLoop<NatsJob>({
    receiver,
    timeoutMs,
    busyDelayMs,
    concurrency,
    shutdownTimeoutMs,
    signals,
    settle,
    extend: {
      get everyMs() {
        return leaseMs / 3;
      },
      call: ({ message }) => message.working(),
    },
    async stopClaiming() {
      await messages?.close();
      await pulling?.catch(() => undefined);
    },
    prepare: () => prepare(),
    afterSignal: () => onShutdown?.(),
  });

  /** Checks the streams, creates the consumer if missing and starts consuming. */
  async function prepare(): Promise<void> {
    const jsm = await js.jetstreamManager();
    await checkStreams(jsm, names, FACTORY);
    const consumer = await jsm.consumers.info(stream, durable).catch(() =>
      jsm.consumers.add(stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        max_deliver: maxDeliver,
        ack_wait: ackWaitMs * NANOS,
        filter_subject: `${subjectPrefix}.${receiver.service}.>`,
      }),
    );
    attempts =
      consumer.config.max_deliver !== undefined && consumer.config.max_deliver > 0
        ? consumer.config.max_deliver
        : maxDeliver;
    leaseMs = (consumer.config.ack_wait ?? ackWaitMs * NANOS) / NANOS;
    checkHandlerBudget(FACTORY, receiver, {
      timeoutMs,
      limitMs: leaseMs,
      limitName: `the consumer's ack_wait`,
    });
    const pull = await (await js.consumers.get(stream, durable)).consume({ max_messages: concurrency });
    messages = pull;
    pulling = (async () => {
      for await (const message of pull) {
        void loop.run({
          message,
          label: `NATS message ${stream}#${message.seq}`,
          data: jobOfBody(decoder.decode(message.data)),
          attempt: message.info.deliveryCount,
          maxAttempts: attempts,
        });
        await loop.free();
      }
    })();
  }

  const worker: NatsWorker = { start: () => loop.start().then(() => worker), stop: loop.stop };
  return worker;
}
