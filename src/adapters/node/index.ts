/**
 * @module
 * `@svc/webhooks/node`: a `node:http` request listener, and the pieces the Node framework adapters
 * share: raw body reading (streamed, size-capped) and outcome/Response writers.
 */
export type { WebhookRoutes } from '../routes.js';
export { handleNodeRequest } from './handle-request.js';
export { createNodeListener } from './listener.js';
export type { NodeRequestLike } from './raw-body.js';
export { readRawBody } from './raw-body.js';
export { readNodeBody } from './read-body.js';
export { writeOutcome, writeResponse } from './write-outcome.js';
