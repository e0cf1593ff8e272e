import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// `import … from "./x.js"`, `export … from "./x.js"`, `import "./x.js"`, `import("./x.js")`, `require("./x.cjs")`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\(\s*)["']([^"']+)["']/g;

/** The specifiers a built file imports or requires. */
export function specifiers(dir: string, file: string): string[] {
  const code = readFileSync(join(dir, file), 'utf8');
  return [...code.matchAll(SPECIFIER)].map((match) => match[1]!);
}

/** Every built file reachable from `entries` (relative imports followed), and the bare specifiers they import. */
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
      else external.add(specifier);
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
