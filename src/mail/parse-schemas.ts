import type { $ZodType } from 'zod/v4/core';
import { miniSchemaApi, onFirstUse } from '../shared/mini-parse.js';
import { buildMailPayloadSchemas } from './payload-schemas.js';

/**
 * The receivers' payload schemas by event name: the definitions of `mailPayloadSchemas` built on
 * `zod/mini` at the first parse, not when the package loads (docs/benchmarks.md, "Cold start").
 */
export const mailParseSchemas = onFirstUse(
  (): ReadonlyMap<string, $ZodType> => new Map(Object.entries(buildMailPayloadSchemas(miniSchemaApi))),
);
