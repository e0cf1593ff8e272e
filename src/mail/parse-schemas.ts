import type { $ZodType } from 'zod/v4/core';
import { UNKNOWN_EVENT_DRIFT, unknownPaths } from '../core/drift.js';
import { miniSchemaApi, onFirstUse } from '../shared/mini-parse.js';
import { buildMailPayloadSchemas } from './payload-schemas.js';

/**
 * The receivers' payload schemas by event name: the definitions of `mailPayloadSchemas` built on
 * `zod/mini` at the first parse, not when the package loads (docs/benchmarks.md, "Cold start").
 * Marked pure: an app that never parses this service's events leaves its schemas out of the bundle.
 */
export const mailParseSchemas = /* @__PURE__ */ onFirstUse(
  (): ReadonlyMap<string, $ZodType> => new Map(Object.entries(buildMailPayloadSchemas(miniSchemaApi))),
);

/** The receiver's drift step (core/drift.ts): the payload's paths its event's schema does not know. */
export function mailDrift(event: {
  readonly known: boolean;
  readonly name: string;
  readonly payload: unknown;
}) {
  const schema = event.known ? mailParseSchemas().get(event.name) : undefined;
  return schema === undefined ? UNKNOWN_EVENT_DRIFT : unknownPaths(schema, event.payload);
}
