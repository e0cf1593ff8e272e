/**
 * The characters of untrusted text (header values, delivery ids, event names a sender chooses) that
 * must not reach a terminal, a log line or a trace viewer as they are.
 */

/**
 * C0 controls but `\t` and `\n`, DEL, C1 controls (U+009B is a one-character CSI on some terminals),
 * the line and paragraph separators U+2028/U+2029 (a new line to many log viewers and editors), and
 * the bidirectional overrides and isolates that reorder what is shown. Written as `\\uXXXX` text, so
 * regular expressions are built from it.
 */
export const UNSAFE_CHARS =
  '\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';

const UNSAFE_ALL = new RegExp(`[\\t\\n${UNSAFE_CHARS}]`, 'g');
// In JSON text, C0 is escaped by JSON.stringify already; the rest is escaped the same way.
const UNSAFE_IN_JSON = new RegExp(`[${UNSAFE_CHARS.slice(UNSAFE_CHARS.indexOf('\\u007f'))}]`, 'g');

const unicodeEscape = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `json` (text `JSON.stringify` made) with C1, DEL, U+2028/U+2029 and bidi controls as `\uXXXX`. */
export function escapeInJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, unicodeEscape);
}

/**
 * Untrusted text with every unsafe character, `\t` and `\n` included, shown as a `\uXXXX` escape:
 * for a value that is not JSON-encoded later (a span attribute, a metric label).
 */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE_ALL, unicodeEscape);
}
