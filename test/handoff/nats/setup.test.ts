/**
 * `ensureNatsStreams` against Debian's nats-server: it creates the streams a worker starts on without
 * a refusal or a warning, a second run changes nothing (the same configuration, no create or update
 * call), and an existing stream with other settings is refused, named setting by setting, unchanged,
 * unless `update: true` (storage never changes).
 */
import { jetstream, jetstreamManager, type StreamConfig } from '@nats-io/jetstream';
import { createNatsHandoff, createNatsWorker, ensureNatsStreams } from '@svc/webhooks/nats';
import { describe, expect, it } from 'vitest';
import { runOneJob } from '../support/one-job.js';
import { createStreams, natsAvailable, natsForSuite, uniqueNames } from './support.js';

const NANOS = 1_000_000;

describe.runIf(natsAvailable())('ensureNatsStreams', () => {
  const nats = natsForSuite();

  /** A JetStream client whose manager records each stream call by name. */
  function recorded() {
    const calls: string[] = [];
    const js = jetstream(nats.nc);
    const manager = async () => {
      const jsm = await js.jetstreamManager();
      const streams = new Proxy(jsm.streams, {
        get(target, property) {
          const value = Reflect.get(target, property);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            calls.push(String(property));
            return value.apply(target, args);
          };
        },
      });
      return Object.assign(Object.create(jsm), { streams });
    };
    return { calls, js: { jetstreamManager: manager } as Pick<typeof js, 'jetstreamManager'> };
  }

  const configOf = async (name: string): Promise<StreamConfig> =>
    (await (await jetstreamManager(nats.nc)).streams.info(name)).config;

  it('creates both streams; the worker starts on them without a warning and runs a job; a second run changes nothing', async () => {
    const names = uniqueNames();
    const options = {
      stream: names.stream,
      deadLetterStream: names.deadLetterStream,
      subjectPrefix: names.prefix,
    };
    const first = recorded();
    const setup = await ensureNatsStreams({ js: first.js, ...options });
    expect(setup).toEqual({
      stream: { name: names.stream, outcome: 'created', changed: [] },
      deadLetterStream: { name: names.deadLetterStream, outcome: 'created', changed: [] },
    });
    const work = await configOf(names.stream);
    expect(work).toMatchObject({
      subjects: [`${names.prefix}.>`],
      storage: 'file',
      retention: 'limits',
      duplicate_window: 300_000 * NANOS,
      max_age: 1_209_600_000 * NANOS,
      num_replicas: 1,
    });
    const dead = await configOf(names.deadLetterStream);
    expect(dead).toMatchObject({
      subjects: [`${names.prefix}-dead.>`],
      storage: 'file',
      retention: 'limits',
      duplicate_window: 300_000 * NANOS,
      max_age: 0,
    });

    // The real worker on what was created: no refusal, no warning, and a job runs to its end.
    const js = jetstream(nats.nc);
    expect(
      await runOneJob(createNatsHandoff({ js, subjectPrefix: names.prefix }), (receiver) =>
        createNatsWorker({ js, receiver, ...options, signals: [] }).start(),
      ),
    ).toEqual([]);

    const second = recorded();
    expect(await ensureNatsStreams({ js: second.js, ...options })).toEqual({
      stream: { name: names.stream, outcome: 'unchanged', changed: [] },
      deadLetterStream: { name: names.deadLetterStream, outcome: 'unchanged', changed: [] },
    });
    expect(second.calls).toEqual(['info', 'info']);
    expect(await configOf(names.stream)).toEqual(work);
    expect(await configOf(names.deadLetterStream)).toEqual(dead);
  });

  it('refuses a stream with other settings, changing nothing; update: true changes them; keeping options match', async () => {
    const names = uniqueNames();
    // As NATS creates them by default: a 2-minute window, no max_age.
    await createStreams(nats.nc, names, 120_000);
    const options = {
      stream: names.stream,
      deadLetterStream: names.deadLetterStream,
      subjectPrefix: names.prefix,
    };
    const before = await configOf(names.stream);
    const refused = recorded();
    const error = await ensureNatsStreams({ js: refused.js, ...options }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'options_invalid', status: 500 });
    const message = (error as Error).message;
    expect(message).toContain(`the stream ${names.stream} exists with other settings`);
    expect(message).toContain('duplicate_window is 120 s, not 300 s');
    expect(message).toContain('max_age is unlimited, not 1209600 s');
    expect(message).toContain('Nothing was changed');
    expect(message).toContain('To keep what is there, pass maxAgeMs: 0.'); // 120 s is under the worker's minimum: no option keeps it
    expect(message).not.toContain('duplicateWindowMs: 120000');
    expect(message).toContain('update: true');
    expect(refused.calls).toEqual(['info']);
    expect(await configOf(names.stream)).toEqual(before);

    // Options that ask for what is there match it, once the window is one the worker takes.
    const jsm = await jetstreamManager(nats.nc);
    await jsm.streams.update(names.stream, { duplicate_window: 600_000 * NANOS });
    await jsm.streams.update(names.deadLetterStream, { duplicate_window: 600_000 * NANOS });
    const keeping = recorded();
    expect(
      await ensureNatsStreams({ js: keeping.js, ...options, duplicateWindowMs: 600_000, maxAgeMs: 0 }),
    ).toMatchObject({ stream: { outcome: 'unchanged' }, deadLetterStream: { outcome: 'unchanged' } });
    expect(keeping.calls).toEqual(['info', 'info']);

    const updated = await ensureNatsStreams({ js: jetstream(nats.nc), ...options, update: true });
    expect(updated).toEqual({
      stream: { name: names.stream, outcome: 'updated', changed: ['duplicate_window', 'max_age'] },
      deadLetterStream: { name: names.deadLetterStream, outcome: 'updated', changed: ['duplicate_window'] },
    });
    expect(await configOf(names.stream)).toMatchObject({
      duplicate_window: 300_000 * NANOS,
      max_age: 1_209_600_000 * NANOS,
    });
    const again = recorded();
    expect(await ensureNatsStreams({ js: again.js, ...options })).toMatchObject({
      stream: { outcome: 'unchanged' },
      deadLetterStream: { outcome: 'unchanged' },
    });
    expect(again.calls).toEqual(['info', 'info']);
  });

  it('never changes storage, even with update: true; a missing subject is added only with update: true', async () => {
    const names = uniqueNames();
    const jsm = await jetstreamManager(nats.nc);
    await jsm.streams.add({ name: names.stream, subjects: ['elsewhere.>'], storage: 'memory' as never });
    const options = {
      stream: names.stream,
      deadLetterStream: names.deadLetterStream,
      subjectPrefix: names.prefix,
    };
    for (const update of [false, true]) {
      const error = await ensureNatsStreams({ js: jetstream(nats.nc), ...options, update }).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'options_invalid' });
      expect((error as Error).message).toContain('storage is memory, not file');
      expect((error as Error).message).toContain('storage cannot be changed on an existing stream');
      expect((error as Error).message).toContain(
        `subjects is ["elsewhere.>"], not a list with '${names.prefix}.>'`,
      );
    }
    expect((await configOf(names.stream)).subjects).toEqual(['elsewhere.>']);

    const other = uniqueNames();
    await jsm.streams.add({
      name: other.stream,
      subjects: ['elsewhere2.>'],
      duplicate_window: 300_000 * NANOS,
    });
    const otherOptions = {
      stream: other.stream,
      deadLetterStream: other.deadLetterStream,
      subjectPrefix: other.prefix,
    };
    await expect(
      ensureNatsStreams({ js: jetstream(nats.nc), ...otherOptions, maxAgeMs: 0 }),
    ).rejects.toMatchObject({
      code: 'options_invalid',
    });
    expect(
      await ensureNatsStreams({ js: jetstream(nats.nc), ...otherOptions, maxAgeMs: 0, update: true }),
    ).toEqual({
      stream: { name: other.stream, outcome: 'updated', changed: ['subjects'] },
      deadLetterStream: { name: other.deadLetterStream, outcome: 'created', changed: [] },
    });
    expect((await configOf(other.stream)).subjects).toEqual(['elsewhere2.>', `${other.prefix}.>`]);
  });

  it('refuses options the worker would refuse, before any call', async () => {
    const { calls, js } = recorded();
    for (const options of [
      { duplicateWindowMs: 120_000 },
      { duplicateWindowMs: 180_000.5 },
      { maxAgeMs: 60_000 },
      { replicas: 0 },
      { subjectPrefix: 'a.b' },
      { stream: 'SAME', deadLetterStream: 'SAME' },
    ])
      await expect(ensureNatsStreams({ js, ...options })).rejects.toMatchObject({ code: 'options_invalid' });
    await expect(ensureNatsStreams({} as never)).rejects.toMatchObject({ code: 'options_invalid' });
    expect(calls).toEqual([]);
  });
});
