import type { $ZodType } from 'zod/v4/core';
import { UNKNOWN_EVENT_DRIFT, unknownPaths } from '../core/drift.js';
import { miniSchemaApi, onFirstUse } from '../shared/mini-parse.js';
import {
  buildCrmAnyEnvelopeSchema,
  buildCrmDataSchemas,
  buildCrmEnvelopeSchemas,
} from './envelope-schemas.js';

/**
 * The receivers' envelope schemas: those of `crmEnvelopeSchemas` by event name, and
 * `crmAnyEnvelopeSchema` for the others, built on `zod/mini` at the first parse, not when the package
 * loads (docs/benchmarks.md, "Cold start"). Marked pure: an app that never parses this service's
 * events leaves its schemas out of the bundle.
 */
export const crmParseSchemas = /* @__PURE__ */ onFirstUse(() => {
  const data = buildCrmDataSchemas(miniSchemaApi);
  const byName: ReadonlyMap<string, $ZodType> = new Map(
    Object.entries(buildCrmEnvelopeSchemas(miniSchemaApi, data)),
  );
  const anyEnvelope: $ZodType = buildCrmAnyEnvelopeSchema(miniSchemaApi);
  return { byName, anyEnvelope };
});

/** The receiver's drift step (core/drift.ts): the envelope's paths its event's schema does not know. */
export function crmDrift(event: {
  readonly known: boolean;
  readonly name: string;
  readonly envelope: unknown;
}) {
  const schema = event.known ? crmParseSchemas().byName.get(event.name) : undefined;
  return schema === undefined ? UNKNOWN_EVENT_DRIFT : unknownPaths(schema, event.envelope);
}
