/**
 * Payload drift: the JSON paths of a parsed payload that its schema does not know. The schemas are
 * lenient (`looseObject`), so a field a service starts sending passes validation and stays in the
 * payload; this names it before something fails on it (docs/observability-drift.md "Payload drift"). Paths
 * only, never values; arrays collapse to `items[]`, record values to `map.*`; an event this version
 * does not know is the one path `""`. Everything a signed body controls here is bounded: depth, paths
 * per delivery, key length (and in drift-log.ts the per-process set of paths already logged).
 */
import type { $ZodType } from 'zod/v4/core';
import { truncateUntrusted } from './untrusted.js';

/** Nesting walked below the payload's root; deeper values are not looked at. */
const MAX_DEPTH = 8;
/** Unknown paths reported per delivery; the rest are not looked for. */
const MAX_PATHS = 64;
/** Characters of one key in a path; a longer key is cut. */
const MAX_KEY_CHARS = 64;

/** The drift of an event this version does not know: the event itself. */
export const UNKNOWN_EVENT_DRIFT: readonly string[] = Object.freeze(['']);
const NONE: readonly string[] = Object.freeze([]);

/**
 * A schema as the walk reads it, built once per schema: an object's fields by name, `null` for a
 * value with nothing to look at below it (a string, a number, `unknown`).
 */
type Node =
  | { readonly type: 'object'; readonly fields: ReadonlyMap<string, Node | null> }
  | { readonly type: 'array' | 'record'; readonly element: Node }
  | { readonly type: 'union'; readonly options: readonly Node[] };

const nodes = new WeakMap<$ZodType, Node | null>();

function nodeOf(schema: $ZodType): Node | null {
  let node = nodes.get(schema);
  if (node === undefined) {
    node = build(schema);
    nodes.set(schema, node);
  }
  return node;
}

function build(schema: $ZodType): Node | null {
  const def = schema._zod.def as { type: string } & Record<string, unknown>;
  switch (def.type) {
    case 'optional':
    case 'nullable':
      return nodeOf(def.innerType as $ZodType);
    case 'object': {
      const shape = def.shape as Record<string, $ZodType>;
      return { type: 'object', fields: new Map(Object.keys(shape).map((key) => [key, nodeOf(shape[key]!)])) };
    }
    case 'array':
    case 'record': {
      const element = nodeOf((def.type === 'array' ? def.element : def.valueType) as $ZodType);
      return element && { type: def.type, element };
    }
    case 'union': {
      const options = (def.options as readonly $ZodType[]).map(nodeOf);
      // An option with nothing below it (a string, a list of strings) fits any value without drift.
      return options.every((option) => option !== null)
        ? { type: 'union', options: options as Node[] }
        : null;
    }
    default:
      return null;
  }
}

/** The paths of `value` (parsed by `schema`) that `schema` does not know, at most {@link MAX_PATHS}. */
export function unknownPaths(schema: $ZodType, value: unknown): readonly string[] {
  const node = nodeOf(schema);
  if (node === null) return NONE;
  const found: string[] = [];
  walk(node, value, '', 0, found);
  return found.length === 0 ? NONE : found;
}

function join(path: string, key: string): string {
  const cut = truncateUntrusted(key, MAX_KEY_CHARS);
  return path === '' ? cut : `${path}.${cut}`;
}

function add(found: string[], path: string): void {
  if (found.length < MAX_PATHS && !found.includes(path)) found.push(path);
}

function walk(node: Node, value: unknown, path: string, depth: number, found: string[]): void {
  if (depth > MAX_DEPTH || found.length >= MAX_PATHS || value === null || typeof value !== 'object') return;
  switch (node.type) {
    case 'object': {
      if (Array.isArray(value)) return;
      const { fields } = node;
      for (const key of Object.keys(value)) {
        const field = fields.get(key);
        // Most known fields hold a string or a number: nothing is read or built for them.
        if (field === undefined) add(found, join(path, key));
        else if (field !== null)
          walk(field, (value as Record<string, unknown>)[key], join(path, key), depth + 1, found);
      }
      return;
    }
    case 'array': {
      if (!Array.isArray(value)) return;
      const items = `${path}[]`;
      for (const item of value) walk(node.element, item, items, depth + 1, found);
      return;
    }
    case 'record': {
      const values = join(path, '*');
      for (const item of Object.values(value)) walk(node.element, item, values, depth + 1, found);
      return;
    }
    case 'union':
      walkUnion(node.options, value, path, depth, found);
  }
}

/** A union's value drifts from the option it fits best: the one with the fewest unknown paths. */
function walkUnion(
  options: readonly Node[],
  value: unknown,
  path: string,
  depth: number,
  found: string[],
): void {
  let best: string[] | undefined;
  for (const option of options) {
    const mine: string[] = [];
    walk(option, value, path, depth, mine);
    if (best === undefined || mine.length < best.length) best = mine;
    if (mine.length === 0) return;
  }
  for (const each of best ?? NONE) add(found, each);
}
