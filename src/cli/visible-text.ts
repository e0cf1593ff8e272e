/**
 * Untrusted text on its way to a terminal. Files, servers, captured headers and bodies may hold
 * escape sequences that move the cursor, clear the screen, retitle the window or hide text; the
 * commands show them as visible escapes (`\x1b`) instead.
 */

import { UNSAFE_CHARS as CONTROLS, escapeInJson } from '../shared/control-chars.js';

const UNSAFE_KEEPING_LINES = new RegExp(`[${CONTROLS}]`, 'g');
const UNSAFE = new RegExp(`[\\t\\n${CONTROLS}]`, 'g');
// What still reaches a terminal from line() and note(): the colour codes of colorsFor, nothing else.
const UNSAFE_OR_COLOUR = new RegExp(`\\u001b\\[(?:1|2|22|31|32|33|39)m|[${CONTROLS}]`, 'g');

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(char: string): string {
  const code = char.charCodeAt(0);
  return (
    NAMED[char] ??
    (code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
  );
}

/**
 * Untrusted text (anything from files, servers, captured headers and bodies) as it may reach a
 * terminal: control characters and escape sequences shown as visible escapes (`\x1b[2J`, `\r`), so a
 * file or an answer cannot move the cursor, retitle the window, clear the screen or hide text.
 * `keepLines` keeps `\n` and `\t` (a response body shown as it is laid out).
 */
export function visible(text: unknown, keepLines = false): string {
  return String(text).replace(keepLines ? UNSAFE_KEEPING_LINES : UNSAFE, escapeChar);
}

/** `value` as JSON for stdout: `JSON.stringify`, with C1 controls and bidi controls escaped too. */
export function jsonText(value: unknown, indent?: number): string {
  return escapeInJson(JSON.stringify(value, null, indent));
}

/** The last line of defence of `line()` and `note()`: every control but `\n`, `\t` and our own colours. */
export const terminalSafe = (text: string): string =>
  text.replace(UNSAFE_OR_COLOUR, (match) => (match.length > 1 ? match : escapeChar(match)));
