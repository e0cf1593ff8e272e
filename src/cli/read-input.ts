/**
 * Reading the files the commands take: a body (or stdin), a headers file, a capture file. Every read
 * is bounded as it streams: reading stops at 16 MiB, so `/dev/zero`, an endless FIFO or pipe ends at
 * once with a usage error instead of filling memory.
 */
import { createReadStream } from 'node:fs';
import { CliError } from './exit-codes.js';
import { visible } from './visible-text.js';

/** Largest input read (a delivery is a few KB; the receivers' default limit is 1 MiB). */
export const MAX_INPUT_BYTES = 16 * 1_048_576;

/** The chunks of `source` up to {@link MAX_INPUT_BYTES}; past it `tooLarge()`, and the source is closed. */
async function readBounded(
  source: AsyncIterable<Buffer> & { destroy(): void },
  tooLarge: () => CliError,
): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of source) {
      length += chunk.byteLength;
      if (length > MAX_INPUT_BYTES) throw tooLarge();
      chunks.push(chunk);
    }
  } finally {
    // Leaving the loop early closes a file; stdin is closed here too, so a writer gets EPIPE.
    if (length > MAX_INPUT_BYTES) source.destroy();
  }
  return new Uint8Array(Buffer.concat(chunks, length));
}

const tooLargeError = (what: string) =>
  new CliError(`${what} is larger than 16 MiB (reading stopped there).`, undefined, 'input_too_large');

/** The exact bytes of `path`, or of stdin for `-`. */
export async function readBytes(path: string, what: string): Promise<Uint8Array> {
  if (path === '-') return readStdin(what);
  try {
    return await readBounded(createReadStream(path), () => tooLargeError(`${what} ${visible(path)}`));
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(
      `Cannot read ${what} ${visible(path)}: ${(error as NodeJS.ErrnoException).code ?? error}.`,
      undefined,
      'file_unreadable',
    );
  }
}

async function readStdin(what: string): Promise<Uint8Array> {
  if (process.stdin.isTTY) {
    throw new CliError(`Pipe the ${what} on stdin, or name a file.`, undefined, 'input_missing');
  }
  return readBounded(process.stdin as AsyncIterable<Buffer> & { destroy(): void }, () =>
    tooLargeError(`The ${what} on stdin`),
  );
}

/**
 * Headers from a file: a JSON object `{ "name": "value" }`, or `Name: value` lines as copied from a
 * request dump (a request line such as `POST /x HTTP/1.1` and blank lines are skipped).
 */
export async function readHeadersFile(path: string): Promise<Headers> {
  const text = new TextDecoder().decode(await readBytes(path, 'headers file'));
  const headers = new Headers();
  const fail = (why: string) =>
    new CliError(
      `Headers file ${visible(path)}: ${why}.`,
      undefined,
      'headers_invalid',
      'Write a JSON object, or one "Name: value" per line.',
    );
  if (text.trimStart().startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw fail('not valid JSON');
    }
    for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
      try {
        headers.append(name, String(value));
      } catch {
        throw fail(`"${visible(name)}" is not a valid header`);
      }
    }
    return headers;
  }
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || /^[A-Z]+ \S+ HTTP\/[\d.]+$/.test(line)) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw fail(`line ${index + 1} is not "Name: value"`);
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      throw fail(`line ${index + 1} is not a valid header`);
    }
  }
  return headers;
}
