/**
 * What payload drift (core/drift.ts) leaves in the process: the (service, event, path) triples seen,
 * at most {@link MAX_SEEN}, so each is logged once and a metric attribute names only those; a hostile
 * signed body cannot grow it past the bound.
 */
import { emit, type LogSink } from './logger.js';
import { truncateUntrusted } from './untrusted.js';

/** (service, event, path) triples remembered per process for the log line and metric attributes. */
const MAX_SEEN = 1_000;

/**
 * Remembers the (service, event, path) triples seen in this process, at most {@link MAX_SEEN}: what
 * is logged once, and what may name a metric attribute.
 */
const seen = new Set<string>();

/**
 * Whether (service, event, path) is remembered, remembering it when there is room: `'new'` the first
 * time, `'seen'` after, `'full'` when it is new but the set is full.
 */
export function rememberDrift(service: string, event: string, path: string): 'new' | 'seen' | 'full' {
  const key = `${service}\u0000${event}\u0000${path}`;
  if (seen.has(key)) return 'seen';
  if (seen.size >= MAX_SEEN) return 'full';
  seen.add(key);
  return 'new';
}

/**
 * Logs `warn` once per process for each (service, event, path) of a delivery's drift: names only,
 * never values. `event` is the event name as received (cut like every untrusted name).
 */
export function logDrift(
  logger: LogSink | undefined,
  service: string,
  event: string,
  drift: readonly string[],
): void {
  const name = truncateUntrusted(event);
  for (const path of drift) {
    if (rememberDrift(service, name, path) !== 'new') continue;
    emit(
      logger,
      'warn',
      path === ''
        ? 'webhook event is one this version does not know'
        : 'webhook payload has a field this version does not know',
      { service, event: name, path },
    );
  }
}
