/**
 * One stream of `ensureNatsStreams`: created with the settings wanted when missing, else read and
 * compared setting by setting, and changed only with `update` (storage and retention never).
 */
import type { JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { type Difference, type EnsuredResource, planUpdate } from '../ensure.js';
import { NANOS, windowAccepted } from './streams.js';

/** The function named in the errors. */
export const FACTORY = 'ensureNatsStreams';
/** JetStream's error code of a stream that is not there. */
const STREAM_NOT_FOUND = 10059;

/** A stream to create or compare: the settings the hand-off needs. */
export type Wanted = Pick<
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
        windowAccepted(window) && `duplicateWindowMs: ${window / NANOS}`,
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
export async function ensureStream(
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
