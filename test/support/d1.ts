/**
 * A real Cloudflare D1 for tests: miniflare runs workerd, whose D1 is SQLite inside a Durable Object,
 * and `getD1Database()` hands Node a proxy of the binding a Worker gets (`env.DB`), so the store runs
 * in Node against the engine a Worker talks to.
 *
 * Stalls are played on the way to the engine, as a network that stops forwarding: in production D1 is
 * a remote service and a Worker's timers run while it waits, but miniflare runs D1 on the Worker's own
 * thread (a long query freezes the whole runtime), and its Node proxy makes most D1 calls block Node
 * until answered. So `stalling()` wraps the real binding: while held, calls wait unanswered; on
 * release they reach the real D1 one after another in the order they were made, and run there, as a
 * stalled connection's requests do.
 *
 * The proxy frees a workerd-side object about 100 ms after Node garbage-collects its stub, by a
 * request of its own that can overtake a call still queued to use that object (200 claims at once on
 * a loaded machine: `Native` assertion `heapValue !== undefined` in workerd, answered as a failed
 * call). {@link retaining} holds every statement a call uses until that call has settled, as a Worker's
 * binding (no proxy, no heap) never needs.
 */
import { Miniflare } from 'miniflare';

/** The D1 binding as miniflare's proxy hands it out (the Workers `D1Database`). */
export type D1Binding = Awaited<ReturnType<Miniflare['getD1Database']>>;

type Statement = ReturnType<D1Binding['prepare']>;

/** A binding whose calls can be held. */
export interface StallingD1 {
  readonly database: D1Binding;
  /** From now on, calls wait unanswered. */
  hold(): void;
  /** Lets the held calls through, in order, and stops holding; resolves once they settled. */
  release(): Promise<void>;
}

/** A running D1. */
export interface D1Server {
  /** The binding, as a Worker's `env.DB`. */
  readonly database: D1Binding;
  /** The same database behind a transport that can stop forwarding. */
  stalling(): StallingD1;
  /** `use(binding)` on a binding whose runtime is then disposed: every later call fails at once. */
  unreachable<T>(use: (binding: D1Binding) => T): Promise<T>;
  close(): Promise<void>;
}

/**
 * The binding, with each statement a pending call uses (its own, or a batch's) held until the call
 * settles: its stub cannot be collected, so its workerd object is not freed under the call.
 */
export function retaining(database: D1Binding): D1Binding {
  const real = new WeakMap<object, Statement>();
  const until = <T>(call: Promise<T>, held: unknown): Promise<T> =>
    call.finally(() => {
      void held;
    });
  const wrap = (statement: Statement): Statement => {
    const wrapper = {
      bind: (...values: unknown[]) => wrap(statement.bind(...values)),
      all: () => until(statement.all(), statement),
      run: () => until(statement.run(), statement),
      first: (column?: string) => until(column ? statement.first(column) : statement.first(), statement),
      raw: () => until(statement.raw(), statement),
    } as unknown as Statement;
    real.set(wrapper, statement);
    return wrapper;
  };
  return {
    prepare: (query: string) => wrap(database.prepare(query)),
    batch: (statements: Statement[]) => {
      const reals = statements.map((s) => real.get(s) ?? s);
      return until(database.batch(reals), reals);
    },
    exec: (query: string) => database.exec(query),
  } as unknown as D1Binding;
}

const WORKER = 'export default { fetch() { return new Response(null, { status: 404 }); } };';

function stallingOf(database: D1Binding): StallingD1 {
  let held: (() => Promise<void>)[] | undefined;
  const gate = <T>(call: () => Promise<T>): Promise<T> => {
    if (!held) return call();
    const queue = held;
    return new Promise<T>((resolve, reject) => queue.push(() => call().then(resolve, reject)));
  };
  const real = new WeakMap<object, Statement>();
  const wrap = (statement: Statement): Statement => {
    const wrapper = {
      bind: (...values: unknown[]) => wrap(statement.bind(...values)),
      all: () => gate(() => statement.all()),
      run: () => gate(() => statement.run()),
      first: (column?: string) => gate(() => (column ? statement.first(column) : statement.first())),
      raw: () => gate(() => statement.raw()),
    } as unknown as Statement;
    real.set(wrapper, statement);
    return wrapper;
  };
  const wrapped = {
    prepare: (query: string) => wrap(database.prepare(query)),
    batch: (statements: Statement[]) => gate(() => database.batch(statements.map((s) => real.get(s) ?? s))),
    exec: (query: string) => gate(() => database.exec(query)),
  } as unknown as D1Binding;
  return {
    database: wrapped,
    hold() {
      held ??= [];
    },
    async release() {
      const queue = held ?? [];
      held = undefined;
      // One at a time, as they arrived: a stalled connection delivers its requests in order.
      for (const next of queue) await next();
    },
  };
}

/** Starts miniflare with one D1 database (`DB`), in memory. */
export async function startD1(): Promise<D1Server> {
  const mf = new Miniflare({ modules: true, script: WORKER, d1Databases: ['DB'] });
  const database = retaining(await mf.getD1Database('DB'));
  return {
    database,
    stalling: () => stallingOf(database),
    async unreachable(use) {
      const gone = new Miniflare({ modules: true, script: WORKER, d1Databases: ['DB'] });
      const result = use(retaining(await gone.getD1Database('DB')));
      await gone.dispose();
      return result;
    },
    close: () => mf.dispose(),
  };
}
