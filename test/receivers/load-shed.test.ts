/**
 * Shedding load (option `maxInFlight`): past the cap a request is answered 503 `overloaded` with
 * `Retry-After` at once, its body unread, and every accepted delivery is handled once. Handlers (or
 * the hand-off write) are held on a promise the test opens; every wait is on a count, never on time.
 * Receivers run on a virtual clock nobody advances unless a test says so, so no deadline fires on a
 * loaded machine.
 */
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { createMailReceiver, type Outcome } from '@svc/webhooks';
import { createFetchHandler } from '@svc/webhooks/fetch';
import type { HandoffJob, HandoffTarget } from '@svc/webhooks/handoff';
import { createNodeListener } from '@svc/webhooks/node';
import { createVirtualClock } from '@svc/webhooks/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryInbox, InboxReceipt } from '../../src/receiver/inbox-receipt.js';
import { listen } from '../adapters/support/servers.js';
import { sqliteDatabase, uniqueTable } from '../inbox/support.js';
import { type Delivery, MAIL_SECRET, mailDelivery } from './support.js';

const quiet = () => {};
const N = 5; // the cap: deliveries held in flight
const K = 3; // the overflow

/** A count the test can wait on: `reached(n)` resolves once it is at least `n`. */
function counter() {
  let count = 0;
  const waiting: { at: number; resolve: () => void }[] = [];
  return {
    get count() {
      return count;
    },
    bump() {
      count++;
      for (const waiter of waiting.filter((w) => w.at <= count)) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
    reached(at: number): Promise<void> {
      return at <= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ at, resolve }));
    },
  };
}

/** A promise the test opens. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/**
 * A mail receiver capped at `maxInFlight` (undefined: the default) whose handler counts each
 * delivery and waits for `held`.
 */
function heldReceiver(maxInFlight: number | false | undefined, held: Promise<void>) {
  const entered = counter();
  const handled = new Map<string, number>();
  const outcomes: Outcome[] = [];
  const logs: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const receiver = createMailReceiver({
    secret: MAIL_SECRET,
    ...(maxInFlight === undefined ? {} : { maxInFlight }),
    clock: createVirtualClock(),
    logger: (entry) => logs.push(entry),
    onOutcome: (outcome) => outcomes.push(outcome),
  }).onAny(async (event) => {
    handled.set(event.deliveryId, (handled.get(event.deliveryId) ?? 0) + 1);
    entered.bump();
    await held;
  });
  return { receiver, entered, handled, outcomes, logs };
}

interface Answer {
  deliveryId: string;
  status: number;
  retryAfter: string | null;
  code: string | undefined;
}

async function answerOf(delivery: Delivery, response: Response): Promise<Answer> {
  const body = (await response.json()) as { error?: { code: string } };
  return {
    deliveryId: delivery.deliveryId,
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    code: body.error?.code,
  };
}

type HeldReceiver = ReturnType<typeof heldReceiver>['receiver'];
type Send = (delivery: Delivery) => Promise<Response>;

/**
 * Sends N + K deliveries at once through what `mount` makes of the receiver, with the cap at N and
 * the handlers held: exactly K are answered (503 overloaded, Retry-After) while N are in their
 * handlers; once released, the N are answered 200, each handled once, and deliveries after them
 * (a new one, and a shed one sent again) are accepted.
 */
async function burstOverTheCap(mount: (receiver: HeldReceiver) => Promise<Send>) {
  const held = gate();
  const { receiver, entered, handled, outcomes, logs } = heldReceiver(N, held.opened);
  const send = await mount(receiver);
  const deliveries = Array.from({ length: N + K }, () => mailDelivery());
  const answered = counter();
  const answers: Answer[] = [];
  const all = deliveries.map((delivery) =>
    send(delivery).then(async (response) => {
      answers.push(await answerOf(delivery, response));
      answered.bump();
    }),
  );
  await Promise.all([entered.reached(N), answered.reached(K)]);
  // N hold the slots until released, so nothing else can answer now.
  expect(entered.count).toBe(N);
  expect(answers).toHaveLength(K);
  for (const answer of answers)
    expect(answer).toMatchObject({ status: 503, retryAfter: '1', code: 'overloaded' });
  const shed = new Set(answers.map((a) => a.deliveryId));
  const overloaded = outcomes.filter((o) => o.code === 'overloaded');
  expect(overloaded.map((o) => o.deliveryId).sort()).toEqual([...shed].sort());
  for (const outcome of overloaded) expect(outcome).toMatchObject({ kind: 'failed', mode: 'direct' });
  // One warning for the burst, not one per shed request.
  expect(logs.filter((l) => l.message.includes('shed'))).toEqual([
    {
      level: 'warn',
      message: 'webhook deliveries shed: maxInFlight reached',
      fields: { service: 'mail', maxInFlight: N, shed: 1 },
    },
  ]);

  held.open();
  await Promise.all(all);
  const accepted = answers.filter((a) => !shed.has(a.deliveryId));
  expect(accepted).toHaveLength(N);
  for (const answer of accepted) expect(answer.status).toBe(200);
  for (const delivery of deliveries)
    expect(handled.get(delivery.deliveryId) ?? 0).toBe(shed.has(delivery.deliveryId) ? 0 : 1);
  expect(outcomes.filter((o) => o.kind === 'handled')).toHaveLength(N);

  // The slots were given back: a new delivery is accepted, and so is a shed one sent again.
  const retried = deliveries.find((d) => shed.has(d.deliveryId))!;
  for (const delivery of [mailDelivery(), retried]) {
    const answer = await answerOf(delivery, await send(delivery));
    expect(answer.status).toBe(200);
    expect(handled.get(delivery.deliveryId)).toBe(1);
  }
}

describe('maxInFlight', () => {
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  it('sheds exactly the overflow of a burst on a real node:http server; every accepted delivery is handled once', async () => {
    await burstOverTheCap(async (receiver) => {
      const { baseUrl, close } = await listen(createServer(createNodeListener(receiver)));
      closing.push(close);
      return (delivery) => fetch(baseUrl, { method: 'POST', headers: delivery.headers, body: delivery.body });
    });
  });

  it('sheds exactly the overflow through the fetch handler, without reading the shed bodies', async () => {
    const requests: Request[] = [];
    await burstOverTheCap(async (receiver) => {
      const handler = createFetchHandler(receiver);
      return (delivery) => {
        const request = new Request('http://127.0.0.1/webhooks/mail', {
          method: 'POST',
          headers: delivery.headers,
          body: delivery.body,
        });
        requests.push(request);
        return handler(request);
      };
    });
    // The slot is taken before the body is read: a shed request's body stays unread.
    const unread = requests.slice(0, N + K).filter((request) => !request.bodyUsed);
    expect(unread).toHaveLength(K);
  });

  it('gives the slot back when a handler throws, and when it outlasts its deadline (still running)', async () => {
    const clock = createVirtualClock();
    const late = gate();
    const entered = counter();
    const throwing = mailDelivery();
    const slow = mailDelivery();
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      maxInFlight: 1,
      clock,
      timeoutMs: 1_000,
      logger: quiet,
    }).onAny(async (event) => {
      entered.bump();
      if (event.deliveryId === throwing.deliveryId) throw new Error('downstream refused');
      if (event.deliveryId === slow.deliveryId) await late.opened;
    });
    expect(await receiver.receive(throwing)).toMatchObject({ kind: 'failed', code: 'handler_failed' });
    const slowVerdict = receiver.receive(slow);
    await entered.reached(2);
    expect(await receiver.receive(mailDelivery())).toMatchObject({ kind: 'failed', code: 'overloaded' });
    await clock.advance(1_000);
    expect(await slowVerdict).toMatchObject({ kind: 'failed', code: 'handler_timeout' });
    // Its handler still runs (its claim held, so no retry runs it twice), but its answer went out:
    // it holds no slot, or one hung dependency would shrink the cap until every delivery is shed.
    expect(await receiver.receive(mailDelivery())).toMatchObject({ kind: 'handled' });
    late.open();
  });

  it('gives the slot back when the client goes away mid-body, and mid-handler', async () => {
    const codes: string[] = [];
    const judged = counter();
    const entered = counter();
    let waitForAbort = true;
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      maxInFlight: 1,
      clock: createVirtualClock(),
      logger: quiet,
      onOutcome: (outcome) => {
        codes.push(outcome.code ?? outcome.kind);
        judged.bump();
      },
    }).onAny(async (_event, { signal }) => {
      entered.bump();
      if (!waitForAbort) return;
      waitForAbort = false;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    });
    const server = createServer(createNodeListener(receiver));
    // Registered after the listener: when it runs, the request's receive has taken its slot.
    const arrived = counter();
    server.on('request', () => arrived.bump());
    const { baseUrl, close } = await listen(server);
    closing.push(close);
    const post = (delivery: Delivery, signal?: AbortSignal) =>
      fetch(baseUrl, { method: 'POST', headers: delivery.headers, body: delivery.body, signal });

    // Mid-body: headers and part of a body, then the connection is cut.
    const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1');
    socket.write(
      'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"event":',
    );
    await arrived.reached(1);
    expect((await post(mailDelivery())).status).toBe(503);
    socket.destroy();
    await judged.reached(2);
    expect(codes).toEqual(['overloaded', 'body_unreadable']);

    // Mid-handler: the handler runs until the client's abort reaches its signal, then the slot is free.
    const controller = new AbortController();
    const gone = post(mailDelivery(), controller.signal).catch(() => 'aborted');
    await entered.reached(1);
    expect((await post(mailDelivery())).status).toBe(503);
    controller.abort();
    expect(await gone).toBe('aborted');
    await judged.reached(4);
    expect(codes.slice(2)).toEqual(['overloaded', 'handled']);
    expect((await post(mailDelivery())).status).toBe(200);
  });

  /**
   * N + K deliveries at a hand-off receiver whose write is held: exactly K are shed while N wait for
   * the write; released, the N are acknowledged and written once each.
   */
  async function acknowledgementsOverTheCap(
    held: ReturnType<typeof gate>,
    writing: ReturnType<typeof counter>,
    handoff: HandoffTarget,
    written: () => Promise<string[]>,
  ) {
    const outcomes: Outcome[] = [];
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      handoff,
      maxInFlight: N,
      clock: createVirtualClock(),
      logger: quiet,
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    const deliveries = Array.from({ length: N + K }, () => mailDelivery());
    const answered = counter();
    const verdicts = deliveries.map((delivery) =>
      receiver.receive(delivery).then((verdict) => {
        answered.bump();
        return verdict;
      }),
    );
    await Promise.all([writing.reached(N), answered.reached(K)]);
    expect(writing.count).toBe(N);
    expect(answered.count).toBe(K);
    expect(outcomes.map((o) => [o.mode, o.kind, o.code])).toEqual(
      Array.from({ length: K }, () => ['enqueue', 'failed', 'overloaded']),
    );
    held.open();
    const settled = await Promise.all(verdicts);
    const accepted = deliveries.filter((_, i) => settled[i]!.kind === 'queued').map((d) => d.deliveryId);
    expect(accepted).toHaveLength(N);
    expect(settled.filter((v) => v.kind === 'failed' && v.code === 'overloaded')).toHaveLength(K);
    expect((await written()).sort()).toEqual(accepted.sort());
  }

  it("caps a queue engine's acknowledgement (the hand-off write) the same way", async () => {
    const held = gate();
    const writing = counter();
    const jobs: HandoffJob[] = [];
    const handoff: HandoffTarget = {
      async enqueue(job) {
        writing.bump();
        await held.opened;
        jobs.push(job);
        return 'enqueued';
      },
    };
    await acknowledgementsOverTheCap(held, writing, handoff, async () => jobs.map((j) => j.deliveryId));
  });

  it("caps the database inbox's acknowledgement (the row insert, on a real SQLite file)", async () => {
    const db = sqliteDatabase();
    closing.push(() => db.close());
    const inbox = db.inbox({ table: uniqueTable() }) as ReturnType<typeof db.inbox> & DeliveryInbox;
    await inbox.migrate();
    const held = gate();
    const writing = counter();
    const gated: typeof inbox = {
      ...inbox,
      async storeDelivery(receipt: InboxReceipt) {
        writing.bump();
        await held.opened;
        return inbox.storeDelivery(receipt);
      },
    };
    await acknowledgementsOverTheCap(held, writing, gated, async () =>
      (await inbox.list()).rows.map((row) => row.deliveryId),
    );
  });

  it('caps at 256 by default; `false` takes no cap', async () => {
    for (const [maxInFlight, shed] of [
      [undefined, 1],
      [false, 0],
    ] as const) {
      const held = gate();
      const { receiver, entered } = heldReceiver(maxInFlight, held.opened);
      const answered = counter();
      const verdicts = Array.from({ length: 257 }, () =>
        receiver.receive(mailDelivery()).then((verdict) => {
          answered.bump();
          return verdict;
        }),
      );
      await Promise.all([entered.reached(257 - shed), answered.reached(shed)]);
      expect(answered.count).toBe(shed);
      held.open();
      const kinds = (await Promise.all(verdicts)).map((v) => v.kind);
      expect(kinds.filter((kind) => kind === 'handled')).toHaveLength(257 - shed);
    }
  });

  it('refuses a cap that is not a positive whole number or false', () => {
    for (const maxInFlight of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '8', true, null])
      expect(() =>
        createMailReceiver({ secret: MAIL_SECRET, maxInFlight: maxInFlight as unknown as number }),
      ).toThrow(
        expect.objectContaining({
          code: 'options_invalid',
          message: expect.stringContaining('maxInFlight must be a positive whole number, or false'),
        }),
      );
  });
});
