/**
 * The checks of the runtime suite, run over HTTP against test/runtimes/app.mjs served by one runtime.
 * Deliveries are signed with node:crypto (test/adapters/support/deliveries.ts), never our signer.
 */
import { crmDelivery, type Delivery, hmac, mailDelivery } from '../adapters/support/deliveries.js';

/** The secrets and limits of app.mjs (run.mts writes them as its settings.mjs). */
export const SETTINGS = {
  mailSecret: 'whsec_runtime_mail_0123456789abcdef',
  crmSecret: 'whsec_runtime_crm_0123456789abcdef0',
  maxBodyBytes: 64 * 1024,
  // The slow handler outlives its deadline; the lease outlives both.
  timeoutMs: 400,
  leaseMs: 10_000,
  slowTo: 'slow@example.com',
  slowMs: 1_000,
} as const;

/** What app.mjs says about the runtime it runs in. */
export interface AppInfo {
  name: string;
  version: string;
  nodeCrypto: boolean;
  process: string;
  dedupKeys: number;
}

export interface Check {
  name: string;
  /** Resolves with an optional detail for the report; throws what went wrong. */
  run(base: URL): Promise<string | undefined>;
}

function expectEqual(actual: unknown, expected: unknown, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

const mail = (options: Parameters<typeof mailDelivery>[0] = {}) =>
  mailDelivery({ secret: SETTINGS.mailSecret, ...options });
const crm = () => crmDelivery({ secret: SETTINGS.crmSecret });

function post(
  base: URL,
  delivery: Delivery,
  init: { body?: string | Uint8Array; headers?: Record<string, string> } = {},
) {
  return fetch(new URL(`/webhooks/${delivery.service}`, base), {
    method: 'POST',
    body: init.body ?? delivery.body,
    headers: init.headers ?? delivery.headers,
  });
}

async function answer(response: Response): Promise<{ status: number; body: unknown }> {
  return { status: response.status, body: await response.json() };
}

async function runs(base: URL, deliveryId: string): Promise<number> {
  const response = await fetch(new URL(`/runs?id=${encodeURIComponent(deliveryId)}`, base));
  return ((await response.json()) as { runs: number }).runs;
}

export async function info(base: URL): Promise<AppInfo> {
  return (await (await fetch(new URL('/info', base))).json()) as AppInfo;
}

const OK = { ok: true };
const DUPLICATE = { ok: true, result: 'duplicate' };
/** An error answer; the message is left out of the comparison (the codes are the contract). */
const refusal = (code: string) => ({ error: { code, message: '<message>' } });
const withoutMessage = (body: unknown) => {
  const error = (body as { error?: { code?: string } }).error;
  return error ? { error: { code: error.code, message: '<message>' } } : body;
};

async function handledOnce(base: URL, delivery: Delivery): Promise<undefined> {
  expectEqual(await answer(await post(base, delivery)), { status: 200, body: OK }, 'answer');
  expectEqual(await runs(base, delivery.deliveryId), 1, 'handler runs');
  return undefined;
}

async function poll(read: () => Promise<number>, want: number, ms: number): Promise<number> {
  const end = Date.now() + ms;
  let value = await read();
  while (value !== want && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

/** A mail delivery whose handler outlives its deadline (app.mjs). */
function slowMail(): Delivery {
  const { deliveryId, body } = mail();
  return mail({ deliveryId, body: JSON.stringify({ ...JSON.parse(body), to: SETTINGS.slowTo }) });
}

export const CHECKS: readonly Check[] = [
  {
    name: 'verify: @svc/webhooks/verify, a rotation and a changed byte',
    async run(base) {
      const body = mail().body;
      const response = await fetch(new URL('/verify', base), {
        method: 'POST',
        body,
        headers: { 'x-signature': hmac(SETTINGS.mailSecret, body) },
      });
      expectEqual(
        await response.json(),
        { rotated: { ok: true, secretIndex: 1 }, tampered: 'signature_mismatch' },
        'verify results',
      );
      return (await info(base)).nodeCrypto ? 'node:crypto' : 'Web Crypto';
    },
  },
  { name: 'mail delivery handled (fetch adapter)', run: (base) => handledOnce(base, mail()) },
  { name: 'crm delivery handled (fetch adapter)', run: (base) => handledOnce(base, crm()) },
  {
    name: 'forged signature: 401 signature_mismatch, no handler',
    async run(base) {
      const delivery = mail();
      const forged = {
        ...delivery.headers,
        'x-svcmail-sig': hmac('whsec_not_the_secret_0123456789', delivery.body),
      };
      const { status, body } = await answer(await post(base, delivery, { headers: forged }));
      expectEqual(
        { status, body: withoutMessage(body) },
        { status: 401, body: refusal('signature_mismatch') },
        'answer',
      );
      expectEqual(await runs(base, delivery.deliveryId), 0, 'handler runs');
      return undefined;
    },
  },
  {
    name: 'duplicate: 200 duplicate, handler ran once',
    async run(base) {
      const delivery = crm();
      expectEqual((await post(base, delivery)).status, 200, 'first answer');
      expectEqual(
        await answer(await post(base, delivery)),
        { status: 200, body: DUPLICATE },
        'second answer',
      );
      expectEqual(await runs(base, delivery.deliveryId), 1, 'handler runs');
      return undefined;
    },
  },
  {
    name: 'too large: 413 body_too_large',
    async run(base) {
      const delivery = mail();
      const big = new Uint8Array(SETTINGS.maxBodyBytes + 1).fill(0x20);
      const headers = { ...delivery.headers, 'x-svcmail-sig': hmac(SETTINGS.mailSecret, big) };
      const { status, body } = await answer(await post(base, delivery, { body: big, headers }));
      expectEqual(
        { status, body: withoutMessage(body) },
        { status: 413, body: refusal('body_too_large') },
        'answer',
      );
      return undefined;
    },
  },
  {
    name: 'wrong method: 405 method_not_allowed, Allow: POST',
    async run(base) {
      const response = await fetch(new URL('/webhooks/mail', base));
      const allow = response.headers.get('allow');
      const { status, body } = await answer(response);
      expectEqual(
        { status, allow, body: withoutMessage(body) },
        { status: 405, allow: 'POST', body: refusal('method_not_allowed') },
        'answer',
      );
      return undefined;
    },
  },
  {
    name: 'memory store: 20 concurrent copies, handler ran once',
    async run(base) {
      const before = (await info(base)).dedupKeys;
      const delivery = crm();
      const statuses = (await Promise.all(Array.from({ length: 20 }, () => post(base, delivery)))).map(
        (response) => response.status,
      );
      if (!statuses.includes(200) || statuses.some((status) => status !== 200 && status !== 409))
        throw new Error(`statuses: ${statuses.join(' ')}`);
      expectEqual(await runs(base, delivery.deliveryId), 1, 'handler runs');
      expectEqual((await info(base)).dedupKeys - before, 1, 'keys the memory store added');
      return `${statuses.filter((status) => status === 409).length} × 409`;
    },
  },
  {
    name: 'deadline: 503 handler_timeout after a quick delivery, twice, late completions recorded',
    async run(base) {
      // A quick delivery first: on Workers it arms a timer in its own request, which ends at once, so
      // the slow ones after it need timers of their own requests. Each slow handler finishes after
      // its answer; its completion must still be recorded (ctx.waitUntil on Workers).
      await handledOnce(base, mail());
      const slow = [slowMail(), slowMail()];
      for (const delivery of slow) {
        const response = await post(base, delivery);
        const retryAfter = response.headers.get('retry-after');
        const { status, body } = await answer(response);
        expectEqual(
          { status, retryAfter: retryAfter !== null, body: withoutMessage(body) },
          { status: 503, retryAfter: true, body: refusal('handler_timeout') },
          `answer to ${delivery.deliveryId}`,
        );
      }
      for (const delivery of slow) {
        expectEqual(await poll(() => runs(base, delivery.deliveryId), 1, 10_000), 1, 'late handler runs');
        // Completed after the answer: the sender's retry is a duplicate, not a second run.
        expectEqual(await answer(await post(base, delivery)), { status: 200, body: DUPLICATE }, 'retry');
      }
      return undefined;
    },
  },
];
