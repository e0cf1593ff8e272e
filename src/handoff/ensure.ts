/**
 * What the engines' setup functions (`ensureNatsStreams`, `ensureSqsQueues`) share: a resource is
 * created with the settings the docs require, or an existing one is compared setting by setting. A
 * difference is never changed silently: it is refused with `options_invalid`, naming each setting,
 * the value found, the value wanted and how to keep or change it; with `update: true` the settings
 * the engine can change are changed, and one it cannot change is still refused.
 */
import { optionsInvalid } from './worker-checks.js';

/**
 * What a setup function did to one stream or queue: `created`, found with the settings wanted
 * (`unchanged`), or `updated` (with `update: true`; `changed` names the settings).
 *
 * @example
 * ```ts
 * const done: EnsuredResource = { name: 'WEBHOOKS', outcome: 'unchanged', changed: [] };
 * ```
 */
export interface EnsuredResource {
  /** The stream's or queue's name. */
  name: string;
  outcome: 'created' | 'unchanged' | 'updated';
  /** The settings changed (outcome `updated`); empty otherwise. */
  changed: string[];
}

/** One setting of an existing resource that is not the one wanted. */
export interface Difference {
  /** The engine's name of the setting (`duplicate_window`, `VisibilityTimeout`). */
  setting: string;
  found: string;
  wanted: string;
  /** The option that asks for the value found, to keep it (`duplicateWindowMs: 120000`); none when no option does. */
  keep?: string;
  /** Whether the engine can change it on an existing resource. */
  mutable: boolean;
}

/** A stream or a queue, and its name: `{ kind: 'dead-letter stream', name: 'WEBHOOKS_DEAD' }`. */
export interface Resource {
  kind: string;
  name: string;
}

/** The refusal of an existing resource whose settings differ (none changed). */
export function differencesRefused(
  factory: string,
  resource: Resource,
  differences: readonly Difference[],
  update: boolean,
): Error {
  const listed = differences.map((d) => `${d.setting} is ${d.found}, not ${d.wanted}`).join('; ');
  const keep = differences.flatMap((d) => (d.keep ? [d.keep] : []));
  const fixed = differences.filter((d) => !d.mutable).map((d) => d.setting);
  const fixes = [
    ...(keep.length > 0 ? [`To keep what is there, pass ${keep.join(', ')}.`] : []),
    fixed.length > 0
      ? `${fixed.join(' and ')} cannot be changed on an existing ${resource.kind}: create one under another name, or delete this one once it is empty.`
      : update
        ? ''
        : 'To change it to the settings wanted, pass update: true (svc-webhooks setup … --update).',
  ].filter(Boolean);
  return optionsInvalid(
    factory,
    `the ${resource.kind} ${resource.name} exists with other settings: ${listed}. Nothing was changed. ${fixes.join(' ')}`,
  );
}

/**
 * The settings to change on an existing resource with `differences`: none when there are none, all
 * of them when `update` allows it and the engine can change each; otherwise the refusal is thrown.
 */
export function planUpdate(
  factory: string,
  resource: Resource,
  differences: readonly Difference[],
  update: boolean,
): string[] {
  if (differences.length === 0) return [];
  if (!update || differences.some((d) => !d.mutable))
    throw differencesRefused(factory, resource, differences, update);
  return differences.map((d) => d.setting);
}
