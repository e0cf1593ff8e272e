/** One POST of exact bytes, as the services send it: no redirects followed, a 10 s limit. */

import { CliError, EXIT } from './exit-codes.js';
import { describeFetchError } from './output.js';

/** What the receiving app answered. */
export interface Answer {
  status: number;
  /** The response body as text, cut at 4096 characters (at most 16 KiB of it is read). */
  body: string;
  durationMs: number;
}

const MAX_BODY = 4096;
// Bytes read to show MAX_BODY characters (up to 4 bytes each in UTF-8).
const MAX_READ = 4 * MAX_BODY;

/** POSTs `body` with `headers` to `url`; a network failure throws a {@link CliError} (exit 3). */
export async function post(
  url: string,
  headers: Record<string, string>,
  body: Uint8Array | string,
  timeoutMs = 10_000,
): Promise<Answer> {
  const started = performance.now();
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      // email-service §6 rule 3, crm-service §6 rule 4: redirects are not followed.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const { message, exitCode } = describeFetchError(error);
    throw new CliError(`${url}: ${message}`, exitCode, 'unreachable', 'Start the app, or check the --url.');
  }
  const { text } = await readLimited(response, MAX_READ);
  return {
    status: response.status,
    body: text.length > MAX_BODY ? `${text.slice(0, MAX_BODY)}…` : text,
    durationMs: Math.round(performance.now() - started),
  };
}

/**
 * At most `maxBytes` of a body, as text: the server chooses its size, so reading stops there and the
 * rest is never downloaded (an endless answer ends at once). `complete` is false when cut.
 */
export async function readLimited(
  response: Response,
  maxBytes: number,
): Promise<{ text: string; complete: boolean }> {
  if (!response.body) return { text: '', complete: true };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let complete = false;
  try {
    while (length <= maxBytes) {
      const { done, value } = await reader.read();
      if (done) {
        complete = true;
        break;
      }
      chunks.push(value);
      length += value.byteLength;
    }
  } catch {
    // A reset or the time limit mid-body: what arrived is kept.
  } finally {
    await reader.cancel().catch(() => {});
  }
  return { text: Buffer.concat(chunks).toString('utf8'), complete: complete && length <= maxBytes };
}

/** The emulator's JSON answer, read up to 1 MiB; `undefined` when it is larger or not JSON. */
export async function readEmulatorJson(response: Response): Promise<unknown> {
  const { text, complete } = await readLimited(response, 1_048_576);
  if (!complete) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The URL given, checked: http or https only (a usage error otherwise). */
export function parseUrl(value: string | undefined, option = '--url'): string {
  if (!value) throw new CliError(`${option} is required.`, EXIT.usage, 'url_missing');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(
      `${option} "${value}" is not a URL.`,
      EXIT.usage,
      'url_invalid',
      'Write e.g. http://127.0.0.1:3000/webhooks/mail.',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`${option} must be http or https.`, EXIT.usage, 'url_invalid');
  }
  return url.href;
}

/** Whether a status is a success for the services (any 2xx). */
export const isSuccess = (status: number): boolean => status >= 200 && status < 300;
