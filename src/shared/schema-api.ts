/**
 * The zod functions the service schemas are written with, as one object: each schema module is a
 * function of it, so one definition builds both the full-zod schemas of `@svc/webhooks/schemas` and
 * the `zod/mini` schemas the receivers parse with (src/shared/mini-parse.ts). Only the functional
 * forms both APIs share belong here (`optional(x)`, `x.check(includes('@'))`, never `x.optional()`):
 * a method that only full zod has would fail on the mini side, which test/shared/mini-parse.test.ts
 * builds for every event and compares against full zod.
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
} from 'zod';

/** The shared functional subset of `zod` and `zod/mini`, typed as full zod (the public schemas). */
export interface SchemaApi {
  array: typeof array;
  guid: typeof guid;
  includes: typeof includes;
  int: typeof int;
  isoDatetime: typeof iso.datetime;
  literal: typeof literal;
  looseObject: typeof looseObject;
  nonnegative: typeof nonnegative;
  nullable: typeof nullable;
  nullish: typeof nullish;
  number: typeof number;
  optional: typeof optional;
  record: typeof record;
  string: typeof string;
  union: typeof union;
  unknown: typeof unknown;
}

/** Full zod: what `@svc/webhooks/schemas` exports is built with this. */
export const fullSchemaApi: SchemaApi = {
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
};
