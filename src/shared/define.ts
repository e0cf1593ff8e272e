/**
 * Builds a module-level value (a zod schema, a group of schema fields, a lookup table) right away and
 * returns it. Call it as `/* @__PURE__ *\/ define(() => …)`: the annotation tells an app's bundler
 * that the call has no effect besides its result, so a definition the app never uses is dropped, and
 * with the last schema so is zod. An unannotated `z.looseObject({ ...fields })` at the top of a module
 * is kept by every bundler (a call, and spreads that could run getters), which put all of zod and
 * every schema into an app that imported only `isWebhookError` (docs/benchmarks.md, bundle size).
 *
 * The value is still built once, when the module loads: nothing changes on the hot path.
 *
 * @example
 * ```ts
 * import * as z from 'zod';
 *
 * // At module level, with the annotation before the call (it cannot be shown inside this comment).
 * export const dealLostDataSchema = define(() => z.looseObject({ deal_id: z.string(), title: z.string() }));
 * ```
 */
export function define<T>(build: () => T): T {
  return build();
}
