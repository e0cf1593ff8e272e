// Compiled by .ci/consumer/check-types.mjs --peers, once the optional peers are installed: each
// entry that needs a peer, used together with that peer's own types as an app writes it, under
// `skipLibCheck: false`. Copied to peers.cts too, so it also compiles as CommonJS.
//
// msw ships two sets of declarations (`.d.mts` for `import`, `.d.ts` for `require`), and its
// `HttpHandler` has private members: a handler typed from the other set is not assignable to the
// app's own. So `./testing/msw` must name msw's types in the app's own mode
// (scripts/one-declaration-set.mjs keeps its `.d.ts` a copy, not a re-export of its `.d.cts`).
import { http, HttpResponse, type HttpHandler } from 'msw';
import { setupServer } from 'msw/node';
import { createCrmEmitter, createMailEmitter } from '@svc/webhooks/testing';
import { crmApiHandlers, mailApiHandlers } from '@svc/webhooks/testing/msw';

const own: HttpHandler = http.get('https://app.example.test/health', () => HttpResponse.json({ ok: true }));
const handlers: HttpHandler[] = [
  own,
  ...mailApiHandlers(createMailEmitter()),
  ...crmApiHandlers(createCrmEmitter()),
];
export const server = setupServer(...handlers);
