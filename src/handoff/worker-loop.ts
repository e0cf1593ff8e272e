/**
 * The one worker loop of every queue engine (modelled on pg-boss's `Worker`: one loop, the
 * queue-specific parts injected): fetch up to the free slots → {@link runAndSettle} each (run,
 * `jobAction`, the engine's settle, one report) → fetch again at once when work came, else after
 * `pollMs` or a `wake()`. Engines that push jobs (BullMQ's `Worker`, a NATS consumer, pg-boss's
 * `work`) skip `fetch` and hand each job to `run`. One shutdown for all: stop claiming, wait for the
 * running jobs up to `shutdownTimeoutMs`, then abort their handlers' signal (a failed run is put
 * back without using an attempt) and wait at most as long again.
 */
import {
  describe,
  type EngineParts,
  type LoopJob,
  type RunResult,
  reportJob,
  runAndSettle,
} from './run-and-settle.js';

/** The engine's part of a {@link WorkerLoop}. */
export interface WorkerLoopOptions<J extends LoopJob> extends EngineParts<J> {
  /** Jobs run at once. */
  readonly concurrency: number;
  /** On stop, time allowed to running jobs before their signal aborts, in ms. */
  readonly shutdownTimeoutMs: number;
  /** Signals that stop the loop gracefully (listened to from `start()`); `[]` for none. */
  readonly signals: readonly NodeJS.Signals[];
  /**
   * Claims up to `max` jobs (a receive, a claim of rows with a lease); `[]` when none came. Omitted
   * by engines that push jobs to `run`. A rejection is reported and retried after a backoff.
   */
  fetch?(max: number): Promise<readonly J[]>;
  /** Wait after a fetch that found nothing, unless woken, in ms. Default 0 (the fetch waits itself: a long poll). */
  readonly pollMs?: number | undefined;
  /** Named in the report of a failed fetch (`SQS receive`). */
  readonly fetchName?: string | undefined;
  /**
   * Jobs of one fetch with the same key run one after another (a FIFO group); after one is not done,
   * the rest go to `handBack` unrun, so the group's order holds across retries.
   */
  groupOf?(job: J): string;
  handBack?(job: J): unknown;
  /** Runs once before the first fetch: reads and checks the engine's settings; a rejection rejects `start()`. */
  prepare?(): Promise<void>;
  /** Stops the engine handing out jobs (abort a long poll, close a consumer). */
  stopClaiming?(): unknown;
  /** After the running jobs ended (`drained`), or the bound passed with some still running: flush, close. */
  afterStop?(drained: boolean): unknown;
  /** After a signal stopped the loop: stop the engine's client, re-raise the signal, the app's `onShutdown`. */
  afterSignal?(signal: NodeJS.Signals): unknown;
}

/** A worker loop: {@link createWorkerLoop}. */
export interface WorkerLoop<J extends LoopJob> {
  /** Prepares once, then listens to the signals and, with `fetch`, starts fetching; the same promise on every call. */
  start(): Promise<void>;
  /** Runs a job the engine pushed, counted among the running ones; never rejects. */
  run(job: J): Promise<RunResult>;
  /** Resolves once fewer than `concurrency` jobs run (or the loop stops). */
  free(): Promise<void>;
  /** Fetches now instead of after `pollMs` (a LISTEN notification, a job that was just written). */
  wake(): void;
  /** Fetches and runs until a fetch finds nothing; resolves how many ran. For tests and cron-style use. */
  runOnce(): Promise<number>;
  /** Stops as the module says; the same promise on every call. */
  stop(): Promise<void>;
  /** True once `stop()` was called. */
  readonly stopping: boolean;
}

/** A worker loop over an engine's parts. */
export function createWorkerLoop<J extends LoopJob>(options: WorkerLoopOptions<J>): WorkerLoop<J> {
  const { receiver, concurrency, shutdownTimeoutMs, signals, fetch, pollMs = 0 } = options;
  const shutdown = new AbortController();
  const running = new Set<Promise<unknown>>();
  let busy = 0;
  let starting: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  let loop: Promise<void> | undefined;
  /** Resolves the loop's current wait: a free slot, the poll delay or a failure's backoff. */
  let wakeUp: (() => void) | undefined;
  let woken = false;
  const state = { signal: shutdown.signal, shuttingDown: () => stopping !== undefined };

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = ms === Number.POSITIVE_INFINITY ? undefined : setTimeout(resolve, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      wakeUp = undefined;
    });

  function track<T>(work: Promise<T>, size: number): Promise<T> {
    busy += size;
    const done = work.finally(() => {
      busy -= size;
      running.delete(done);
      wakeUp?.();
    });
    running.add(done);
    return done;
  }

  /** A fetch's jobs: each alone, or one group after another when the engine orders them. */
  function runFetched(jobs: readonly J[]): Promise<unknown>[] {
    if (!options.groupOf) return jobs.map((job) => track(runAndSettle(job, options, state), 1));
    const groups = new Map<string, J[]>();
    for (const job of jobs)
      groups.set(options.groupOf(job), [...(groups.get(options.groupOf(job)) ?? []), job]);
    return [...groups.values()].map((group) => track(runGroup(group), group.length));
  }

  async function runGroup(group: J[]): Promise<void> {
    for (let i = 0; i < group.length; i++) {
      const on = stopping === undefined && (await runAndSettle(group[i]!, options, state));
      if (on && on.settled !== 'retried') continue;
      for (const rest of group.slice(on ? i + 1 : i))
        await Promise.resolve(options.handBack?.(rest)).catch(() => undefined);
      return;
    }
  }

  /** One fetch into the free slots; the number of jobs it claimed. */
  async function fetchOnce(failures: number): Promise<number> {
    try {
      const jobs = await fetch!(concurrency - busy);
      if (jobs.length > 0) runFetched(jobs);
      return jobs.length;
    } catch (error) {
      if (stopping !== undefined) return 0;
      reportJob(receiver, error, undefined, `${options.fetchName ?? 'fetch'} failed: ${describe(error)}`);
      await wait(Math.min(30_000, 500 * 2 ** Math.min(6, failures + 1)));
      return -1;
    }
  }

  async function background(): Promise<void> {
    let failures = 0;
    while (stopping === undefined) {
      while (busy >= concurrency && stopping === undefined) await wait(Number.POSITIVE_INFINITY);
      if (stopping !== undefined) return;
      const claimed = await fetchOnce(failures);
      failures = claimed < 0 ? failures + 1 : 0;
      if (claimed !== 0 || woken || pollMs === 0 || stopping !== undefined) {
        woken = false;
        continue;
      }
      await wait(pollMs);
    }
  }

  function onSignal(signal: NodeJS.Signals): void {
    void stop().then(async () => {
      try {
        await options.afterSignal?.(signal);
      } catch (error) {
        reportJob(receiver, error, undefined, `worker shutdown: ${describe(error)}`);
      }
    });
  }

  function stop(): Promise<void> {
    stopping ??= (async () => {
      for (const name of signals) process.off(name, onSignal);
      await starting?.catch(() => undefined);
      await options.stopClaiming?.();
      wakeUp?.();
      await loop;
      const within = (ms: number) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), ms);
        });
        return Promise.race([Promise.all(running), late]).finally(() => clearTimeout(timer));
      };
      let drained = (await within(shutdownTimeoutMs)) !== 'late';
      if (!drained) {
        // The handlers see their signal abort; a run that then fails is put back without an attempt.
        shutdown.abort(new Error('worker shutting down'));
        // A handler ignoring its signal is left to the engine's redelivery; its claim keeps others off.
        drained = (await within(shutdownTimeoutMs)) !== 'late';
      }
      await options.afterStop?.(drained);
    })();
    return stopping;
  }

  return {
    start() {
      starting ??= (async () => {
        await options.prepare?.();
        if (stopping !== undefined) return;
        for (const name of signals) process.once(name, onSignal);
        loop = fetch ? background() : undefined;
      })();
      return starting;
    },
    run: (job) => track(runAndSettle(job, options, state), 1),
    async free() {
      while (busy >= concurrency && stopping === undefined) await Promise.race(running);
    },
    wake() {
      if (wakeUp) wakeUp();
      else woken = true;
    },
    async runOnce() {
      let total = 0;
      for (;;) {
        const claimed = Math.max(0, await fetchOnce(0));
        total += claimed;
        await Promise.all(running);
        if (claimed === 0) return total;
      }
    },
    stop,
    get stopping() {
      return stopping !== undefined;
    },
  };
}
