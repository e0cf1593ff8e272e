/**
 * The SQS hand-off's bound under a blocked event loop: a delivery SQS does not accept in time is
 * answered 503 `enqueueTimeoutMs` after its body was read, however long the receiving process was
 * busy before the write started, and the SDK's own retries and backoff end with it. Time is the
 * receiver's virtual clock; the process being blocked is played by that clock moving on while no
 * timer can fire (in the capture hook, which runs right after the body was read), exactly what a busy
 * loop of that length does to a runtime timer. Every instant compared is read from that clock in the
 * process: nothing depends on the machine's speed.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type Clock, createCrmReceiver } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createSqsHandoff } from '@svc/webhooks/sqs';
import { createVirtualClock } from '@svc/webhooks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery } from '../../receivers/support.js';
import { post } from '../pg-boss/support.js';
import { type SqsProcess, spawnSqs, sqsClient, uniqueName } from './support.js';

const START = Date.parse('2026-03-02T10:00:00.000Z');
const TIMEOUT_MS = 2_000;

/** One request as the server saw it, on the receiver's clock. */
interface Seen {
  arrivedAt: number;
  answeredAt?: number;
  status?: number;
  answered: Promise<void>;
}

/**
 * The receiver's clock: virtual time plus `blocked`, time the process spent busy, during which no
 * timer fires (a timer set before it fires as late as the block makes it; one set after counts from
 * the clock's reading then).
 */
function blockableClock() {
  const virtual = createVirtualClock({ start: START });
  const state = { blocked: 0 };
  const clock: Clock = {
    now: () => virtual.now() + state.blocked,
    setTimeout: (callback, ms) => virtual.setTimeout(callback, ms),
    clearTimeout: (handle) => virtual.clearTimeout(handle),
  };
  return { virtual, clock, state };
}

/** `receiver` on a real HTTP server at 127.0.0.1; each request's arrival and answer on `clock`. */
async function serveSeen(receiver: Parameters<typeof createNodeListener>[0], clock: Clock) {
  const listener = createNodeListener(receiver);
  const seen = new Map<string, Seen>();
  const waiting = new Map<string, (record: Seen) => void>();
  const server = createServer((req, res: ServerResponse) => {
    let done!: () => void;
    const record: Seen = { arrivedAt: clock.now(), answered: new Promise((resolve) => (done = resolve)) };
    const id = String(req.headers['x-svc-delivery']);
    seen.set(id, record);
    waiting.get(id)?.(record);
    const writeHead = res.writeHead.bind(res) as (status: number, ...rest: unknown[]) => ServerResponse;
    res.writeHead = ((status: number, ...rest: unknown[]) => {
      record.answeredAt = clock.now();
      record.status = status;
      done();
      return writeHead(status, ...rest);
    }) as typeof res.writeHead;
    listener(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    /** The record of the request of delivery `id`, once it arrived. */
    arrival: (id: string): Promise<Seen> =>
      seen.has(id) ? Promise.resolve(seen.get(id)!) : new Promise((resolve) => waiting.set(id, resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `client` with each `send` reported: its command's name and how it settled. */
function watched(client: SQSClient) {
  const sends: { started: Promise<void>; settled: Promise<unknown>[] } = {
    started: Promise.resolve(),
    settled: [],
  };
  let started!: () => void;
  const rearm = () => {
    sends.started = new Promise((resolve) => (started = resolve));
  };
  rearm();
  const send = ((command: Parameters<SQSClient['send']>[0], options?: { abortSignal?: AbortSignal }) => {
    const result = client.send(command, options);
    sends.settled.push(
      result.then(
        () => 'resolved',
        (error: Error) => error.name,
      ),
    );
    started();
    rearm();
    return result;
  }) as SQSClient['send'];
  return { client: { send }, sends };
}

/**
 * Moves the receiver's clock to `at` and lets the work its timers started run to the end of its
 * promise chain (one event-loop turn: the answer is written without any I/O on the way).
 */
async function moveTo({ virtual, state }: ReturnType<typeof blockableClock>, at: number): Promise<void> {
  await virtual.advanceTo(at - state.blocked);
  await virtual.advance(0);
}

describe('SQS hand-off: 503 within enqueueTimeoutMs of the receipt, the event loop blocked', () => {
  let sqs: SqsProcess;
  let direct: SQSClient;
  let queueUrl: string;
  beforeAll(async () => {
    sqs = await spawnSqs();
    direct = sqsClient(sqs.address);
    ({ QueueUrl: queueUrl } = (await direct.send(
      new CreateQueueCommand({ QueueName: uniqueName('deadline') }),
    )) as {
      QueueUrl: string;
    });
  });
  afterAll(async () => {
    sqs?.child.kill('SIGCONT');
    sqs?.child.kill('SIGKILL');
    direct?.destroy();
  });

  it('SQS paused: each delivery is answered 503 at receipt + enqueueTimeoutMs, or at the end of a longer block without a write', async () => {
    const time = blockableClock();
    const { clock, state } = time;
    /** How long the process is busy right after reading the next body. */
    let block = 0;
    const { client, sends } = watched(direct);
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      clock,
      logger: () => {},
      // Runs right after the body was read: the process then stays busy `block` ms.
      capture: () => {
        state.blocked += block;
      },
      handoff: createSqsHandoff({ client, queueUrl, enqueueTimeoutMs: TIMEOUT_MS }),
    });
    const http = await serveSeen(receiver, clock);
    sqs.child.kill('SIGSTOP');
    try {
      for (const busy of [0, 1_500, TIMEOUT_MS - 1, TIMEOUT_MS + 500]) {
        block = busy;
        const delivery = crmDelivery('deal.won');
        const writes = sends.settled.length;
        const answer = post(http.url, delivery);
        // The write started (SQS, stopped, never answers it), or the answer came without one.
        const started = sends.started;
        const first = await Promise.race([
          started.then(() => 'write' as const),
          http.arrival(delivery.deliveryId).then((seen) => seen.answered.then(() => 'answer' as const)),
        ]);
        const seen = await http.arrival(delivery.deliveryId);
        if (busy < TIMEOUT_MS) {
          expect(first).toBe('write');
          // Not a moment before its bound, and at it, the blocked time inside it (not busy + TIMEOUT_MS).
          await moveTo(time, seen.arrivedAt + TIMEOUT_MS - 1);
          expect(seen.answeredAt).toBeUndefined();
          await moveTo(time, seen.arrivedAt + TIMEOUT_MS);
          expect(seen.answeredAt, 'answered at receipt + enqueueTimeoutMs').toBe(seen.arrivedAt + TIMEOUT_MS);
          // The SDK's request was aborted with the answer.
          expect(await sends.settled[writes]).toBe('AbortError');
        } else {
          // Past the bound before the write could start: answered when the process is free again,
          // with no message sent that the sender is told was not taken.
          expect(first).toBe('answer');
          expect(seen.answeredAt, 'answered once the block ended').toBe(seen.arrivedAt + busy);
          expect(sends.settled.length).toBe(writes);
        }
        expect(seen.status).toBe(503);
        const { status, body } = await answer;
        expect(status).toBe(503);
        expect(JSON.parse(body)).toMatchObject({ error: { code: 'handoff_unavailable' } });
      }
    } finally {
      sqs.child.kill('SIGCONT');
      await http.close();
    }
  });

  it("the SDK's own retries and backoff end at the bound: its send rejects as aborted", async () => {
    const time = blockableClock();
    const { clock } = time;
    // A free port nobody listens on: each attempt is refused at once and the SDK retries after a
    // backoff of a minute, far past the bound, up to 100 times.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    let attempts = 0;
    let backingOff!: () => void;
    const inBackoff = new Promise<void>((resolve) => (backingOff = resolve));
    const retrying = new SQSClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      useQueueUrlAsEndpoint: false,
      maxAttempts: 100,
      retryStrategy: {
        mode: 'standard',
        acquireInitialRetryToken: async () => ({ getRetryCount: () => 0, getRetryDelay: () => 0 }),
        refreshRetryTokenForRetry: async (token) => {
          attempts++;
          backingOff();
          return { getRetryCount: () => token.getRetryCount() + 1, getRetryDelay: () => 60_000 };
        },
        recordSuccess: () => {},
      },
    });
    const { client, sends } = watched(retrying);
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      clock,
      logger: () => {},
      handoff: createSqsHandoff({ client, queueUrl, enqueueTimeoutMs: TIMEOUT_MS }),
    });
    const http = await serveSeen(receiver, clock);
    try {
      const delivery = crmDelivery('deal.won');
      const started = sends.started;
      const answer = post(http.url, delivery);
      await started;
      await inBackoff; // the first attempt was refused; the SDK now waits its minute
      const seen = await http.arrival(delivery.deliveryId);
      await moveTo(time, seen.arrivedAt + TIMEOUT_MS - 1);
      expect(seen.answeredAt).toBeUndefined();
      await moveTo(time, seen.arrivedAt + TIMEOUT_MS);
      expect(seen.answeredAt, 'answered at receipt + enqueueTimeoutMs').toBe(seen.arrivedAt + TIMEOUT_MS);
      expect(seen.status).toBe(503);
      expect(await sends.settled[0]).toBe('AbortError');
      expect((await answer).status).toBe(503);
      expect(attempts).toBe(1);
    } finally {
      await http.close();
      retrying.destroy();
    }
  });
});
