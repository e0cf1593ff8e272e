/**
 * Every part of zod the receivers' parse uses at runtime (src/shared/mini-parse.ts), in one module:
 * `zod/mini`'s schema functions, the parse and error machinery of zod's core, and its English messages.
 *
 * The build turns the import of this module into `#zod-kit` (package.json#imports, tsup.config.ts):
 * a bundler (the `module` condition, or no `node` condition, as Wrangler's) gets `dist/zod-kit.js`,
 * which imports these from the app's `zod`, so a bundle that also uses zod carries it once; Node
 * itself gets `dist/zod-kit-node.js`, the same parts of zod built into one file, so an import from
 * node_modules does not load the whole of `zod/v4/core` (every locale, the JSON Schema code) for
 * them (docs/benchmarks.md, "Cold start").
 */
export {
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
export {
  _safeParse,
  $constructor,
  $ZodError,
  flattenError,
  formatError,
  globalConfig,
} from 'zod/v4/core';
export { default as en } from 'zod/v4/locales/en.js';
