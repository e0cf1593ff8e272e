/**
 * The fetch handler as a Worker's `fetch(request, env, ctx)`: receivers created once per `env` from
 * a function of it, `ctx.waitUntil` given the work that outlives the answer; and, called as other
 * servers call it, a function's receivers created once whatever the second argument.
 */
import { createMailReceiver } from '@svc/webhooks';
import { createFetchHandler } from '@svc/webhooks/fetch';
import { createVirtualClock } from '@svc/webhooks/testing';
import { describe, expect, it } from 'vitest';
import { MAIL_SECRET, mailDelivery } from '../adapters/support/deliveries.js';

const request = (delivery = mailDelivery()) =>
  new Request('http://localhost/webhooks/mail', {
    method: 'POST',
    body: delivery.body,
    headers: delivery.headers,
  });

/** How workerd calls a Worker's fetch. */
type WorkerFetch = (
  request: Request,
  env: object,
  ctx?: { waitUntil(promise: Promise<unknown>): void },
) => Promise<Response>;

/** A Worker's execution context that keeps what it was handed. */
function executionContext() {
  const handed: Promise<unknown>[] = [];
  return { handed, ctx: { waitUntil: (promise: Promise<unknown>) => void handed.push(promise) } };
}

describe('createFetchHandler((env) => routes) as a Worker', () => {
  it('creates the receivers once per env, with that env', async () => {
    const secrets: string[] = [];
    const handler = createFetchHandler((env: { SECRET: string }) => {
      secrets.push(env.SECRET);
      return createMailReceiver({ secret: env.SECRET }).onAny(() => undefined);
    });
    expect(secrets).toEqual([]); // nothing at creation: a Worker's global scope allows no I/O
    const env = { SECRET: MAIL_SECRET };
    const { ctx } = executionContext();
    const delivery = mailDelivery();
    expect((await handler(request(delivery), env, ctx)).status).toBe(200);
    // Same env (workerd passes the same object to every request of an isolate): same receivers, so
    // the memory store recognises the retry.
    expect(await (await handler(request(delivery), env, ctx)).json()).toEqual({
      ok: true,
      result: 'duplicate',
    });
    expect(secrets).toEqual([MAIL_SECRET]);
    // Another env (a test's, another binding set) gets receivers of its own.
    const other = { SECRET: `${MAIL_SECRET}_other` };
    expect((await handler(request(delivery), other, ctx)).status).toBe(401);
    expect(secrets).toEqual([MAIL_SECRET, `${MAIL_SECRET}_other`]);
  });

  it('runs the function again after it threw (a binding not set yet)', async () => {
    let calls = 0;
    const handler = createFetchHandler((env: { SECRET?: string }) => {
      calls++;
      return createMailReceiver({ secret: env.SECRET! });
    });
    const env: { SECRET?: string } = {};
    const { ctx } = executionContext();
    await expect(handler(request(), env, ctx)).rejects.toMatchObject({ code: 'secret_invalid' });
    env.SECRET = MAIL_SECRET;
    expect((await handler(request(), env, ctx)).status).toBe(200);
    expect(calls).toBe(2);
  });

  it('creates them once when the second argument is new on every request (Next.js, Deno)', async () => {
    let calls = 0;
    const handler = createFetchHandler(() => {
      calls++;
      return createMailReceiver({ secret: MAIL_SECRET }).onAny(() => undefined);
    }) as (request: Request, context?: unknown) => Promise<Response>;
    const delivery = mailDelivery();
    expect((await handler(request(delivery), { params: Promise.resolve({}) })).status).toBe(200);
    const again = await handler(request(delivery), { remoteAddr: {}, completed: Promise.resolve() });
    expect(await again.json()).toEqual({ ok: true, result: 'duplicate' });
    expect(calls).toBe(1);
  });

  it('hands ctx.waitUntil the handlers still running at the deadline, and their completion', async () => {
    const clock = createVirtualClock();
    let finish: () => void = () => undefined;
    const mail = createMailReceiver({ secret: MAIL_SECRET, clock, timeoutMs: 1_000 }).onAny(
      () => new Promise<void>((resolve) => (finish = resolve)),
    );
    const handler: WorkerFetch = createFetchHandler(mail);
    const { handed, ctx } = executionContext();
    const delivery = mailDelivery();
    const answer = handler(request(delivery), {}, ctx);
    await clock.advance(1_000);
    expect((await answer).status).toBe(503);
    expect(handed).toHaveLength(1);
    // The retry while the handler runs is in progress, not a second run.
    expect((await handler(request(delivery), {}, ctx)).status).toBe(409);
    finish();
    await handed[0];
    expect(await (await handler(request(delivery), {}, ctx)).json()).toEqual({
      ok: true,
      result: 'duplicate',
    });
  });

  it('hands nothing when the answer comes after the work (and nothing without a ctx)', async () => {
    const handler: WorkerFetch = createFetchHandler(
      createMailReceiver({ secret: MAIL_SECRET }).onAny(() => undefined),
    );
    const { handed, ctx } = executionContext();
    expect((await handler(request(), {}, ctx)).status).toBe(200);
    expect((await handler(request(), {})).status).toBe(200);
    expect(handed).toEqual([]);
  });
});
