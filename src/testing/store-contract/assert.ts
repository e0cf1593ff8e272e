/**
 * The few assertions the store contract needs, with no test framework behind them: each throws an
 * `Error` naming what was checked, what was expected and what the store answered, so the checks run
 * under vitest, jest, node:test, bun test or a plain script alike.
 */
import type { ClaimResult } from '../../dedup/types.js';

/** JSON with sorted keys: two plain values are equal when their canonical texts are. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : 1)))
      : inner,
  );
}

function describe(value: unknown): string {
  if (value instanceof Error) {
    const { code } = value as { code?: unknown };
    return `${value.name}${code === undefined ? '' : ` (code ${String(code)})`}: ${value.message}`;
  }
  return value === undefined ? 'undefined' : canonical(value);
}

/** Throws unless `actual` equals `expected` (deep, for plain objects). */
export function same(actual: unknown, expected: unknown, what: string): void {
  if (canonical(actual) !== canonical(expected)) {
    throw new Error(`${what}: expected ${describe(expected)}, got ${describe(actual)}`);
  }
}

/** Throws unless `condition` holds. */
export function ok(condition: boolean, what: string, actual?: unknown): void {
  if (!condition) throw new Error(`${what}${actual === undefined ? '' : `; got ${describe(actual)}`}`);
}

/** The claim, which must be `claimed`. */
export function claimed(result: ClaimResult, what: string): Extract<ClaimResult, { status: 'claimed' }> {
  if (result.status !== 'claimed') throw new Error(`${what}: expected claimed, got ${describe(result)}`);
  return result;
}

/** Awaits `call`, which must reject with a WebhookError of `code` (and `status`, when given). */
export async function rejects(
  call: Promise<unknown> | undefined,
  code: string,
  what: string,
  status?: number,
): Promise<void> {
  let outcome: unknown;
  try {
    outcome = await call;
  } catch (error) {
    const e = error as { name?: unknown; code?: unknown; status?: unknown };
    if (e?.name === 'WebhookError' && e.code === code && (status === undefined || e.status === status))
      return;
    throw new Error(`${what}: expected a WebhookError with code ${code}, got ${describe(error)}`);
  }
  throw new Error(`${what}: expected a WebhookError with code ${code}, but it resolved ${describe(outcome)}`);
}
