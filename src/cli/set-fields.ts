/** `--set field=value` pairs: the value is JSON when it parses as JSON, else the text itself. */
import { CliError } from './exit-codes.js';

/** Collects repeated `--set` options (commander's option argument parser). */
export function collectSet(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * The overrides of `--set` pairs. `--set to=ana@example.com`, `--set value=5000` (a number),
 * `--set 'tags=["vip"]'`, `--set provider=null`; `--set provider=` (empty) removes the field.
 */
export function parseSetFields(pairs: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) {
      throw new CliError(
        `--set "${pair}" is not field=value.`,
        undefined,
        'bad_set',
        'Write --set to=ana@example.com.',
      );
    }
    const field = pair.slice(0, at);
    const text = pair.slice(at + 1);
    if (field === '__proto__' || field === 'constructor' || field === 'prototype') {
      throw new CliError(`--set cannot set "${field}".`, undefined, 'bad_set');
    }
    out[field] = text === '' ? undefined : parseValue(text);
  }
  return out;
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
