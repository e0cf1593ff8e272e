/**
 * @module
 * `@svc/webhooks/node`: a `node:http` request listener for receivers by path, the per-request
 * function the Node framework adapters share, and the size-capped, time-limited body reader for a
 * custom integration through `receiver.receive()`.
 */
export { handleNodeRequest, type NodeRequestLike } from './handle-request.js';
export { createNodeListener } from './listener.js';
export { readNodeBody } from './read-body.js';
