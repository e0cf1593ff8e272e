/**
 * @module
 * `@svc/webhooks/fetch`: receivers as a `(Request) => Promise<Response>` handler for any
 * web-standard server (Next.js App Router, Hono, Bun, Deno, Cloudflare Workers).
 */
import { findReceiver, NOT_FOUND_BODY, type WebhookRoutes } from './routes.js';

export type { WebhookRoutes } from './routes.js';

/**
 * The part of a Worker's execution context (its `fetch`'s third argument) the handler uses.
 *
 * @example
 * ```ts
 * import type { WaitUntilContext } from '@svc/webhooks/fetch';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: WaitUntilContext): WaitUntilContext {
 *   return value;
 * }
 * ```
 */
export type WaitUntilContext = {
  waitUntil(promise: Promise<unknown>): void;
};

/**
 * The handler: a Worker's `fetch(request, env, ctx)`, or any server's `(request) => response`.
 *
 * @example
 * ```ts
 * import type { FetchHandler } from '@svc/webhooks/fetch';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: FetchHandler): FetchHandler {
 *   return value;
 * }
 * ```
 */
export type FetchHandler = (request: Request, env?: unknown, ctx?: WaitUntilContext) => Promise<Response>;

/**
 * A fetch handler for one receiver (any path), or for receivers by pathname (other paths: 404
 * `not_found`). The receiver reads the body as bytes, capped at its `maxBodyBytes` (413 past it) and
 * its `bodyTimeoutMs` (408).
 *
 * Pass a function returning the receiver (or the routes) to create them when the first request
 * comes instead of when the module loads: frameworks such as Next.js evaluate route modules at
 * build time, when the secrets may not be set (a receiver created then throws `secret_invalid`).
 * On Cloudflare Workers the function gets the Worker's `env`, so the secrets come from its bindings;
 * it runs once per `env` (workerd hands every request of an isolate the same one), elsewhere once.
 * On Workers the handler also hands `ctx.waitUntil` the work that outlives the answer (handlers
 * still running at their deadline, and the dedup store's record of their outcome).
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createFetchHandler } from '@svc/webhooks/fetch';
 *
 * // Cloudflare Workers: the secret from the Worker's bindings
 * export default {
 *   fetch: createFetchHandler((env: { SVC_MAIL_WEBHOOK_SECRET: string }) => ({
 *     '/webhooks/mail': createMailReceiver({ secret: env.SVC_MAIL_WEBHOOK_SECRET }),
 *   })),
 * };
 * // Next.js App Router (app/webhooks/mail/route.ts): created on the first request, not by `next build`
 * export const POST = createFetchHandler(() => createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET! }));
 * ```
 */
export function createFetchHandler(
  routes: WebhookRoutes | (() => WebhookRoutes),
): (request: Request) => Promise<Response>;
export function createFetchHandler<Env>(
  routes: (env: Env) => WebhookRoutes,
): (request: Request, env: Env, ctx?: WaitUntilContext) => Promise<Response>;
export function createFetchHandler(routes: WebhookRoutes | ((env: unknown) => WebhookRoutes)): FetchHandler {
  if (typeof routes === 'function') return lazyHandler(routes);
  const single = findReceiver(routes, '\0');
  if (single !== undefined) return (request, _env, ctx) => single.handle(request, ctx);
  return (request, _env, ctx) => {
    const receiver = findReceiver(routes, new URL(request.url).pathname);
    if (receiver !== undefined) return receiver.handle(request, ctx);
    return Promise.resolve(
      new Response(NOT_FOUND_BODY, { status: 404, headers: { 'content-type': 'application/json' } }),
    );
  };
}

/**
 * Creates the routes on the first request: once per `env` when called as a Worker's
 * `fetch(request, env, ctx)`, else once (Next.js and Deno pass a new object per request as the
 * second argument, so it cannot be the key there). A factory that throws (a secret not set) rejects
 * that request and runs again on the next one.
 */
function lazyHandler(create: (env: unknown) => WebhookRoutes): FetchHandler {
  let handler: FetchHandler | undefined;
  const byEnv = new WeakMap<object, FetchHandler>();
  return (request, env, ctx) => {
    const perEnv = typeof ctx?.waitUntil === 'function' && typeof env === 'object' && env !== null;
    let current = perEnv ? byEnv.get(env) : handler;
    if (current === undefined) {
      try {
        current = createFetchHandler(create(env)) as FetchHandler;
      } catch (error) {
        return Promise.reject(error);
      }
      if (perEnv) byEnv.set(env, current);
      else handler = current;
    }
    return current(request, env, ctx);
  };
}
