/** Reading the files the commands take: a body (or stdin) and a headers file. */
import { readFile } from 'node:fs/promises';
import { CliError } from './exit-codes.js';

/** Largest input read (a delivery is a few KB; the receivers' default limit is 1 MiB). */
const MAX_INPUT_BYTES = 16 * 1_048_576;

/** The exact bytes of `path`, or of stdin for `-`. */
export async function readBytes(path: string, what: string): Promise<Uint8Array> {
  if (path === '-') return readStdin(what);
  try {
    const bytes = await readFile(path);
    if (bytes.byteLength > MAX_INPUT_BYTES) throw new CliError(`${what} ${path} is larger than 16 MiB.`);
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(
      `Cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? error}.`,
      undefined,
      'file_unreadable',
    );
  }
}

async function readStdin(what: string): Promise<Uint8Array> {
  if (process.stdin.isTTY) {
    throw new CliError(`Pipe the ${what} on stdin, or name a file.`, undefined, 'input_missing');
  }
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    length += chunk.byteLength;
    if (length > MAX_INPUT_BYTES) throw new CliError(`The ${what} on stdin is larger than 16 MiB.`);
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
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
      `Headers file ${path}: ${why}.`,
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
        throw fail(`"${name}" is not a valid header`);
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
