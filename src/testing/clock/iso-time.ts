// A few recent instants: a virtual clock stands still between advances, so the records, payloads and
// attempts of a run share a handful of times (in the emitter benchmark, 70 000 timestamps are 3).
const recent = new Map<number, string>();
const RECENT_LIMIT = 64;

/** `new Date(ms).toISOString()`, remembered for recently seen instants. */
export function isoTime(ms: number): string {
  let text = recent.get(ms);
  if (text === undefined) {
    // An invalid time throws the same RangeError as before and is never remembered.
    text = new Date(ms).toISOString();
    if (recent.size >= RECENT_LIMIT) recent.clear();
    recent.set(ms, text);
  }
  return text;
}
