/**
 * What a quarantined row keeps of its failures when a re-drive fails again (docs/inbox.md "When the
 * payload changes"): the latest code and issues, and the first ones it was quarantined with, in its
 * `last_error_*` columns, bounded like every stored message. A re-drive keeps a quarantined row's
 * error columns, so the worker reads the previous ones from the row it claimed.
 */

/** What follows the latest issues in a message that also keeps the first ones. */
export const FIRST_MARK = ' | first: ';

/** The first failure's share of a message that keeps both, in characters. */
const FIRST_MAX = 200;
/** A stored message's bound (the inbox's `storedMessage`). */
const MESSAGE_MAX = 500;

/**
 * The message of a row quarantined again with `message`: the latest, and, when the row's previous
 * failure (`previousCode`, `previousMessage`) was another, the first one it was quarantined with as
 * `<latest> | first: <code>: <message>`.
 */
export function keptIssues(
  message: string,
  code: string,
  previousCode: unknown,
  previousMessage: unknown,
): string {
  if (typeof previousCode !== 'string' || typeof previousMessage !== 'string') return message;
  const at = previousMessage.indexOf(FIRST_MARK);
  const first =
    at >= 0 ? previousMessage.slice(at + FIRST_MARK.length) : `${previousCode}: ${previousMessage}`;
  if (first === `${code}: ${message}`) return message;
  const kept = first.slice(0, FIRST_MAX);
  return `${message.slice(0, MESSAGE_MAX - FIRST_MARK.length - kept.length)}${FIRST_MARK}${kept}`;
}
