import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// `import … from "./x.js"`, `export … from "./x.js"`, `import "./x.js"`, `import("./x.js")`, `require("./x.cjs")`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\(\s*)["']([^"']+)["']/g;

/** The specifiers a built file imports or requires. */
export function specifiers(dir: string, file: string): string[] {
  const code = readFileSync(join(dir, file), 'utf8');
  return [...code.matchAll(SPECIFIER)].map((match) => match[1]!);
}

/**
 * The files a `#` specifier of the build output's package.json#imports (`#zod-kit`, tsup.config.ts)
 * can load from `from`: every target of its conditions in `from`'s module format.
 */
function packageImportTargets(dir: string, from: string, specifier: string): string[] | undefined {
  const scope = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    imports?: Record<string, unknown>;
  };
  const map = scope.imports?.[specifier];
  if (map === undefined) return undefined;
  const targets: string[] = [];
  const walk = (value: unknown) => {
    if (typeof value === 'string') targets.push(value);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(map);
  const ext = from.endsWith('.cjs') ? '.cjs' : '.js';
  return [...new Set(targets.filter((target) => target.endsWith(ext)).map((target) => target.slice(2)))];
}

/**
 * Every built file reachable from `entries` (relative imports and the package's own `#` imports
 * followed), and the bare specifiers they import.
 */
export function reachable(
  dir: string,
  entries: readonly string[],
): { files: Set<string>; external: Set<string> } {
  const files = new Set<string>();
  const external = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const specifier of specifiers(dir, file)) {
      if (specifier.startsWith('./')) queue.push(specifier.slice(2));
      else if (specifier.startsWith('#')) {
        const targets = packageImportTargets(dir, file, specifier);
        if (targets === undefined) external.add(specifier);
        else queue.push(...targets);
      } else external.add(specifier);
    }
  }
  return { files, external };
}

type Metafile = { outputs: Record<string, { inputs: Record<string, unknown> }> };

/** Source files bundled into each built file, from esbuild's metafiles, keyed by file name. */
export function bundledSources(dir: string): Map<string, string[]> {
  const sources = new Map<string, string[]>();
  for (const format of ['esm', 'cjs']) {
    const meta = JSON.parse(readFileSync(join(dir, `metafile-${format}.json`), 'utf8')) as Metafile;
    for (const [output, { inputs }] of Object.entries(meta.outputs)) {
      sources.set(output.split('/').pop()!, Object.keys(inputs));
    }
  }
  return sources;
}
