/**
 * The streams a NATS JetStream hand-off needs, in one call: the work stream (`<prefix>.>`, a
 * duplicate window the worker accepts) and the dead-letter stream (`<prefix>-dead.>`, no `max_age`),
 * both on file storage with limits retention (docs/handoff.md "NATS JetStream"). Created when missing,
 * compared when present: safe at every deploy, and an existing stream is never changed silently.
 */
import type { JetStreamClient, JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { type Difference, type EnsuredResource, planUpdate } from '../ensure.js';
import { optionsInvalid } from '../worker-checks.js';
import { MIN_DUPLICATE_WINDOW_MS } from './subjects.js';

const FACTORY = 'ensureNatsStreams';
const NANOS = 1_000_000;
/** JetStream's error code of a stream that is not there. */
const STREAM_NOT_FOUND = 10059;

/**
 * Options of {@link ensureNatsStreams}: the names as given to `createNatsHandoff` and
 * `createNatsWorker`, and the streams' settings.
 *
 * @example
 * ```ts
 * const options: NatsStreamsOptions = { js, duplicateWindowMs: 300_000, maxAgeMs: 7 * 86_400_000 };
 * ```
 */
export interface NatsStreamsOptions {
  /** Your JetStream client (`jetstream(nc)`); the streams are managed through its `jetstreamManager()`. */
  js: Pick<JetStreamClient, 'jetstreamManager'>;
  /** The work stream. Default `'WEBHOOKS'`. */
  stream?: string;
  /** The dead-letter stream. Default `'WEBHOOKS_DEAD'`. */
  deadLetterStream?: string;
  /** Default `'webhooks'`: subjects `webhooks.>` and `webhooks-dead.>`. */
  subjectPrefix?: string;
  /** `duplicate_window` of both streams, in ms: 180 000 (3 minutes, the worker's minimum) or more. Default 300 000. */
  duplicateWindowMs?: number;
  /** `max_age` of the work stream, in ms (0: kept until its other limits). Default 1 209 600 000 (14 days). */
  maxAgeMs?: number;
  /** `num_replicas` of both streams (a clustered server: 3). Default 1. */
  replicas?: number;
  /** Change an existing stream's settings that JetStream can change, instead of refusing it. Default false. */
  update?: boolean;
}

/**
 * What {@link ensureNatsStreams} did to each stream.
 *
 * @example
 * ```ts
 * const { stream, deadLetterStream }: NatsStreamsSetup = await ensureNatsStreams({ js });
 * console.log(stream.outcome, deadLetterStream.outcome);
 * ```
 */
export interface NatsStreamsSetup {
  stream: EnsuredResource;
  deadLetterStream: EnsuredResource;
}

type Wanted = Pick<
  StreamConfig,
  'name' | 'subjects' | 'retention' | 'storage' | 'duplicate_window' | 'max_age' | 'num_replicas'
>;

/** A duration of the stream config (nanoseconds) as the messages say it; 0 is no limit. */
const duration = (nanos: number) => (nanos === 0 ? 'unlimited' : `${nanos / NANOS / 1_000} s`);

/** The settings of `found` that are not `wanted`'s, each with the option that keeps it. */
function differences(found: Partial<StreamConfig>, wanted: Wanted, work: boolean): Difference[] {
  const list: Difference[] = [];
  const [subject] = wanted.subjects;
  if (!found.subjects?.includes(subject!))
    list.push({
      setting: 'subjects',
      found: JSON.stringify(found.subjects ?? []),
      wanted: `a list with '${subject}'`,
      mutable: true,
    });
  for (const setting of ['storage', 'retention'] as const)
    if (found[setting] !== wanted[setting])
      list.push({ setting, found: String(found[setting]), wanted: wanted[setting], mutable: false });
  const window = found.duplicate_window ?? 0;
  const age = found.max_age ?? 0;
  const replicas = found.num_replicas ?? 1;
  const changeable: [setting: string, found: number, wanted: number, shown: string, keep: string | false][] =
    [
      // A window under the worker's minimum is kept by no option.
      [
        'duplicate_window',
        window,
        wanted.duplicate_window,
        duration(window),
        window / NANOS >= MIN_DUPLICATE_WINDOW_MS && `duplicateWindowMs: ${window / NANOS}`,
      ],
      // Dead letters wait for someone to look at them: no option shortens their stream's age.
      ['max_age', age, wanted.max_age, duration(age), work && `maxAgeMs: ${age / NANOS}`],
      ['num_replicas', replicas, wanted.num_replicas, String(replicas), `replicas: ${replicas}`],
    ];
  for (const [setting, value, want, shown, keep] of changeable)
    if (value !== want)
      list.push({
        setting,
        found: shown,
        wanted: setting === 'num_replicas' ? String(want) : duration(want),
        ...(keep ? { keep } : {}),
        mutable: true,
      });
  return list;
}

const notFound = (error: unknown) => (error as { code?: unknown } | null)?.code === STREAM_NOT_FOUND;

/** Creates `wanted`, or compares the stream there (and updates it when allowed). */
async function ensureStream(
  jsm: JetStreamManager,
  wanted: Wanted,
  work: boolean,
  update: boolean,
): Promise<EnsuredResource> {
  const resource = { kind: work ? 'stream' : 'dead-letter stream', name: wanted.name };
  let found = await jsm.streams.info(wanted.name).then(
    (info) => info.config,
    (error: unknown) => {
      if (notFound(error)) return undefined;
      throw error;
    },
  );
  if (!found) {
    // Another deploy may create it meanwhile: JetStream answers an identical create with the stream,
    // and a different one with an error, after which the stream there is compared.
    const created = await jsm.streams.add(wanted).catch(() => undefined);
    if (created) return { name: wanted.name, outcome: 'created', changed: [] };
    found = (await jsm.streams.info(wanted.name)).config;
  }
  const changed = planUpdate(FACTORY, resource, differences(found, wanted, work), update);
  if (changed.length === 0) return { name: wanted.name, outcome: 'unchanged', changed };
  const subjects = found.subjects ?? [];
  await jsm.streams.update(wanted.name, {
    ...(changed.includes('subjects') ? { subjects: [...subjects, ...wanted.subjects] } : {}),
    duplicate_window: wanted.duplicate_window,
    max_age: wanted.max_age,
    num_replicas: wanted.num_replicas,
  });
  return { name: wanted.name, outcome: 'updated', changed };
}

function wholeMs(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min)
    throw optionsInvalid(FACTORY, `${name} must be a whole number of ms from ${min} (got ${String(value)}).`);
  return value;
}

/**
 * Creates the work and dead-letter streams of the NATS hand-off when missing, with the settings
 * `createNatsWorker` accepts at start: subjects `<prefix>.>` and `<prefix>-dead.>`, file storage,
 * limits retention, a 5-minute duplicate window, `max_age` 14 days on the work stream and none on the
 * dead letters. Idempotent: a stream with those settings is left as it is (no update call), so run it
 * at every deploy. A stream with other settings is refused with `options_invalid` naming each setting,
 * its value and the fix, and nothing is changed, unless `update: true` (then the settings JetStream
 * can change are; storage and retention never are). `svc-webhooks setup nats` runs it from the shell.
 *
 * @example
 * ```ts
 * import { jetstream } from '@nats-io/jetstream';
 * import { connect } from '@nats-io/transport-node';
 * import { ensureNatsStreams } from '@svc/webhooks/nats';
 *
 * const nc = await connect({ servers: process.env.NATS_URL! });
 * const { stream } = await ensureNatsStreams({ js: jetstream(nc) });
 * console.log(stream.name, stream.outcome); // WEBHOOKS created, then WEBHOOKS unchanged
 * ```
 */
export async function ensureNatsStreams(options: NatsStreamsOptions): Promise<NatsStreamsSetup> {
  const {
    js,
    stream = 'WEBHOOKS',
    deadLetterStream = 'WEBHOOKS_DEAD',
    subjectPrefix = 'webhooks',
    duplicateWindowMs = 300_000,
    maxAgeMs = 1_209_600_000,
    replicas = 1,
    update = false,
  } = options ?? ({} as NatsStreamsOptions);
  if (typeof js?.jetstreamManager !== 'function')
    throw optionsInvalid(FACTORY, 'js must be a JetStream client (jetstream(nc) of @nats-io/jetstream).');
  if (typeof subjectPrefix !== 'string' || !/^[A-Za-z0-9_-]+$/.test(subjectPrefix))
    throw optionsInvalid(FACTORY, 'subjectPrefix must be one subject token (letters, digits, _ and -).');
  for (const [name, value] of [
    ['stream', stream],
    ['deadLetterStream', deadLetterStream],
  ] as const)
    if (typeof value !== 'string' || !/^[A-Za-z0-9_-]+$/.test(value))
      throw optionsInvalid(FACTORY, `${name} must be a stream name (letters, digits, _ and -).`);
  if (stream === deadLetterStream)
    throw optionsInvalid(FACTORY, 'stream and deadLetterStream must be two streams.');
  wholeMs('duplicateWindowMs', duplicateWindowMs, MIN_DUPLICATE_WINDOW_MS);
  if (wholeMs('maxAgeMs', maxAgeMs, 0) !== 0 && maxAgeMs < duplicateWindowMs)
    throw optionsInvalid(FACTORY, 'maxAgeMs must be 0 (unlimited) or at least duplicateWindowMs.');
  if (!Number.isSafeInteger(replicas) || replicas < 1 || replicas > 5)
    throw optionsInvalid(FACTORY, 'replicas must be a whole number from 1 to 5.');
  const jsm = await js.jetstreamManager();
  const common = {
    retention: 'limits',
    storage: 'file',
    duplicate_window: duplicateWindowMs * NANOS,
    num_replicas: replicas,
  } as const;
  return {
    stream: await ensureStream(
      jsm,
      { name: stream, subjects: [`${subjectPrefix}.>`], max_age: maxAgeMs * NANOS, ...common },
      true,
      update,
    ),
    deadLetterStream: await ensureStream(
      jsm,
      { name: deadLetterStream, subjects: [`${subjectPrefix}-dead.>`], max_age: 0, ...common },
      false,
      update,
    ),
  };
}
