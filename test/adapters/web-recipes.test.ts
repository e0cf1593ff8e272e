import { createServer } from 'node:http';
import type { WebhookReceiverLike } from '@svc/webhooks';
import { createFetchHandler } from '@svc/webhooks/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceTarget, conformance } from './conformance.js';
import { mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { fetchListener, listen, PATHS } from './support/servers.js';

// The docs/adapters-fetch.md recipes of frameworks that hand a route a web Request: SvelteKit's `POST`
// (+server.ts), React Router 7 / Remix's `action`, Astro's `POST` endpoint. None of them is installed
// here: each recipe is called with the event object its framework passes (the request in
// `{ request }`), that request built from node:http with its body streamed, as their Node adapters do
// (SvelteKit's adapter-node `getRequest`, @react-router/node `createRequest`, @astrojs/node).
type Recipe = (event: { request: Request }) => Promise<Response>;

const recipes: Record<string, (receiver: () => WebhookReceiverLike) => Recipe> = {
  'SvelteKit +server.ts POST': (receiver) => {
    const handle = createFetchHandler(receiver);
    // biome-ignore lint/correctness/noComponentHookFactories: the framework's export name, not a component.
    const POST = ({ request }: { request: Request }) => handle(request);
    return POST;
  },
  'React Router 7 / Remix action': (receiver) => {
    const handle = createFetchHandler(receiver);
    const action = ({ request }: { request: Request }) => handle(request);
    return action;
  },
  'Astro endpoint POST': (receiver) => {
    const handle = createFetchHandler(receiver);
    // biome-ignore lint/correctness/noComponentHookFactories: the framework's export name, not a component.
    const POST = ({ request }: { request: Request }) => handle(request);
    return POST;
  },
};

/** A framework's server: routes by pathname, then calls the route's export with its event. */
function frameworkListener(routes: Record<string, Recipe>) {
  return fetchListener((request) => {
    const route = routes[new URL(request.url).pathname];
    if (route === undefined) return Promise.resolve(new Response('not found', { status: 404 }));
    return route({ request });
  });
}

for (const [name, recipe] of Object.entries(recipes)) {
  describe(name, () => {
    let target: ConformanceTarget;
    beforeAll(async () => {
      const { mail, crm, handled } = createTestReceivers({ maxBodyBytes: 64 * 1024 });
      const server = createServer(
        frameworkListener({ [PATHS.mail]: recipe(() => mail), [PATHS.crm]: recipe(() => crm) }),
      );
      target = { ...(await listen(server)), paths: PATHS, handled };
    });
    afterAll(() => target.close());
    conformance(() => target, { maxBodyBytes: 64 * 1024 });
  });
}

describe('a hook that read the body before the route (SvelteKit handle, Remix middleware)', () => {
  let baseUrl: string;
  let close: () => Promise<void>;
  let receivers: ReturnType<typeof createTestReceivers>;
  beforeAll(async () => {
    receivers = createTestReceivers();
    const POST = recipes['SvelteKit +server.ts POST']!(() => receivers.mail);
    const server = createServer(
      fetchListener(async (request) => {
        const path = new URL(request.url).pathname;
        if (path === '/text-first') await request.text();
        if (path === '/clone-first') await request.clone().text();
        return POST({ request });
      }),
    );
    ({ baseUrl, close } = await listen(server));
  });
  afterAll(() => close());

  const post = (path: string, delivery = mailDelivery()) =>
    fetch(`${baseUrl}${path}`, { method: 'POST', body: delivery.body, headers: delivery.headers });

  it('request.text() first: 500 raw_body_unavailable, the fix in the log, no handler', async () => {
    const delivery = mailDelivery();
    const response = await post('/text-first', delivery);
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('raw_body_unavailable');
    const logged = receivers.logs.filter((entry) => JSON.stringify(entry).includes('raw_body_unavailable'));
    expect(String(logged.at(-1)?.fields.err)).toContain('request.clone()');
    expect(receivers.handled(delivery.deliveryId)).toBe(0);
  });

  it('request.clone().text() first: the route still gets the bytes', async () => {
    const delivery = mailDelivery();
    expect((await post('/clone-first', delivery)).status).toBe(200);
    expect(receivers.handled(delivery.deliveryId)).toBe(1);
  });
});
