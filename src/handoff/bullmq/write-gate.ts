/**
 * What keeps the BullMQ hand-off bounded in a Redis outage: a delivery refused with 503 must not leave
 * its job behind in the client. ioredis keeps every command sent while it is disconnected (and, with
 * `maxRetriesPerRequest: null`, every command in flight when the connection dropped) and writes it
 * when Redis returns: 4,000 refused 20 KB deliveries held 314 MiB and were all stored after their 503.
 * So a write starts only while the connection is ready and the receiver still waits, and the writes
 * in flight are capped (a frozen Redis keeps its connection "ready").
 */
import { WebhookError } from '../../shared/errors.js';
import { connectionStatus, type RawRedisClient, redisClientOf } from './redis-client.js';

/** The error a refused write rejects with (the receiver answers it 503 `handoff_unavailable`). */
export function unavailable(reason: string): WebhookError {
  return new WebhookError('handoff_unavailable', `BullMQ hand-off: ${reason}.`);
}

/** Runs writes to the Redis behind `holder` (a BullMQ `Queue`) only when they can be bounded. */
export interface WriteGate {
  /** The Redis client, once BullMQ connected it (undefined for a queue-like object without one). */
  readonly client: RawRedisClient | undefined;
  /** Runs `write` now, or rejects with {@link unavailable} without starting it. */
  run<T>(signal: AbortSignal, write: () => Promise<T>): Promise<T>;
}

export function createWriteGate(holder: unknown, maxPendingWrites: number): WriteGate {
  const clientPromise = redisClientOf(holder);
  let client: RawRedisClient | undefined;
  let pending = 0;
  // Deliveries arriving before the first connection wait for it, each until its own signal aborts;
  // an aborted one leaves nothing behind (a listener on a promise that may never settle would).
  const waiting = new Set<() => void>();
  clientPromise?.then(
    (resolved) => {
      client = resolved;
      for (const wake of waiting) wake();
      waiting.clear();
    },
    () => undefined, // BullMQ reports its own connection errors
  );

  function connected(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        signal.removeEventListener('abort', abort);
        resolve();
      };
      const abort = (): void => {
        waiting.delete(wake);
        reject(unavailable('Redis was not connected before the receiver stopped waiting'));
      };
      waiting.add(wake);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  return {
    get client() {
      return client;
    },
    async run(signal, write) {
      // The receiver stopped waiting: a write started now would store a job it answered 503 for.
      if (signal.aborted) throw unavailable('the receiver stopped waiting before the write started');
      if (pending >= maxPendingWrites)
        throw unavailable(`${pending} writes to Redis are pending (maxPendingWrites); refused at once`);
      pending++;
      try {
        if (clientPromise && !client) await connected(signal);
        if (signal.aborted) throw unavailable('the receiver stopped waiting before the write started');
        if (client) {
          const { ready, status } = connectionStatus(client);
          if (!ready) throw unavailable(`the Redis connection is ${status}; refused at once`);
        }
        return await write();
      } finally {
        pending--;
      }
    },
  };
}
