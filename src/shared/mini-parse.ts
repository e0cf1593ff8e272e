/**
 * The receivers' own validation on `zod/mini`: the same schema definitions as
 * `@svc/webhooks/schemas` (src/shared/schema-api.ts), built with the functions of `zod/mini` on the
 * first parse of each service, so an app that receives webhooks neither bundles full zod's
 * method-chaining API nor builds a schema while it starts (docs/benchmarks.md, "Cold start").
 *
 * What users see does not change: issues carry the same paths, codes and English messages, and a
 * failure's error passes `instanceof ZodError` of full zod with `.issues`, `.flatten()` and `.format()`
 * (test/shared/mini-parse.test.ts compares both on bad payloads of every event).
 */
import {
  array,
  guid,
  includes,
  int,
  iso,
  literal,
  looseObject,
  nonnegative,
  nullable,
  nullish,
  number,
  optional,
  record,
  string,
  union,
  unknown,
} from 'zod/mini';
import {
  _safeParse,
  $constructor,
  $ZodError,
  type $ZodErrorMap,
  type $ZodIssue,
  type $ZodType,
  flattenError,
  formatError,
  globalConfig,
} from 'zod/v4/core';
import en from 'zod/v4/locales/en.js';
import type { SchemaApi } from './schema-api.js';

/**
 * `zod/mini`'s functions under the full-zod types of {@link SchemaApi}: at runtime the schemas are
 * mini schemas, so callers only parse with them ({@link parseWithMini}), never call a method.
 */
export const miniSchemaApi = {
  array,
  guid,
  includes,
  int,
  isoDatetime: iso.datetime,
  literal,
  looseObject,
  nonnegative,
  nullable,
  nullish,
  number,
  optional,
  record,
  string,
  union,
  unknown,
} satisfies Record<keyof SchemaApi, unknown> as unknown as SchemaApi;

/**
 * Full zod's `ZodError`, rebuilt on zod's core: zod checks `instanceof` by trait name, so this error is
 * `instanceof ZodError` of an app's own `zod`, and it has full zod's `flatten()` and `format()`.
 */
const ZodCompatibleError = /* @__PURE__ */ $constructor(
  'ZodError',
  (inst: $ZodError, issues: $ZodIssue[]) => {
    $ZodError.init(inst, issues);
    inst.name = 'ZodError';
    Object.defineProperties(inst, {
      flatten: { value: (mapper?: (issue: $ZodIssue) => unknown) => flattenError(inst, mapper) },
      format: { value: (mapper?: (issue: $ZodIssue) => unknown) => formatError(inst, mapper) },
    });
  },
  undefined,
  { Parent: Error },
);

// Full zod installs its English messages globally when it loads; zod/mini installs none ("Invalid
// input"). English unless the app configured messages (`z.config(...)`, or full zod loaded): then the
// app's own, exactly as a full-zod parse would give.
let english: $ZodErrorMap | undefined;
const messages: $ZodErrorMap = (issue) => {
  if (globalConfig.localeError !== undefined) return undefined;
  const custom = globalConfig.customError?.(issue);
  if (custom !== undefined) return custom;
  english ??= en().localeError;
  return english(issue);
};

const safeParse = /* @__PURE__ */ _safeParse(ZodCompatibleError);

/** The outcome of {@link parseWithMini}: the parsed value, or the zod error of a failure. */
export type MiniParseResult<T> = { success: true; data: T } | { success: false; error: $ZodError };

// One context for every parse (zod only reads it): what `safeParse` would copy for each call.
const context = { error: messages, async: false };

/**
 * Parses `value` with a schema built from {@link miniSchemaApi}. A valid value is run through the
 * schema directly, as zod's `safeParse` runs it, without a context copied per call; a failure is parsed
 * again by `safeParse` itself, so its error is exactly zod's.
 */
export function parseWithMini<T>(schema: $ZodType, value: unknown): MiniParseResult<T> {
  const result = schema._zod.run({ value, issues: [] }, context);
  if (!(result instanceof Promise) && result.issues.length === 0)
    return { success: true, data: result.value as T };
  return safeParse(schema, value, { error: messages }) as MiniParseResult<T>;
}

/** A value built on first use, once (the receivers' schema tables). */
export function onFirstUse<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= build();
    return value;
  };
}
