/**
 * Reading a capture file: NDJSON, one delivery per line, as `formatCaptureLine` writes it
 * (`{ v: 1, service, receivedAt, headers, body }`, body base64). docs/cli.md "Capture format".
 */
import type { Service } from './events.js';
import { CliError } from './exit-codes.js';
import { visible } from './visible-text.js';

/** One captured delivery, decoded. */
export interface Capture {
  /** 1-based line number in the file. */
  line: number;
  service: Service;
  receivedAt: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The captures of a file's text; a usage error naming the line and what is wrong. */
export function parseCaptures(text: string, path: string): Capture[] {
  const captures: Capture[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '') continue;
    const fail = (why: string) =>
      new CliError(
        `${visible(path)}:${i + 1}: ${why}.`,
        undefined,
        'capture_invalid',
        'A capture file holds one JSON object per line, as formatCaptureLine() writes it (docs/cli.md "Capture format").',
      );
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw fail('not a JSON line');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail('not a JSON object');
    const entry = value as Record<string, unknown>;
    if (entry.v !== 1) throw fail(`unknown format version ${JSON.stringify(entry.v)} (expected 1)`);
    if (entry.service !== 'mail' && entry.service !== 'crm') throw fail('"service" must be "mail" or "crm"');
    const headers = entry.headers;
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
      throw fail('"headers" must be an object');
    // Every header as fetch takes it, so a bad one is this usage error, never a failed send (exit 3).
    const valid = new Headers();
    for (const [name, v] of Object.entries(headers)) {
      if (typeof v !== 'string') throw fail(`header "${visible(name)}" must be a string`);
      try {
        valid.append(name, v);
      } catch {
        throw fail(
          `header "${visible(name)}" is not a valid HTTP header (name, line break or non-Latin-1 value)`,
        );
      }
    }
    if (typeof entry.body !== 'string' || entry.body.length % 4 !== 0 || !BASE64.test(entry.body)) {
      throw fail('"body" must be the base64 of the body bytes');
    }
    captures.push({
      line: i + 1,
      service: entry.service,
      receivedAt: typeof entry.receivedAt === 'string' ? entry.receivedAt : '',
      headers: headers as Record<string, string>,
      body: new Uint8Array(Buffer.from(entry.body, 'base64')),
    });
  }
  if (captures.length === 0) {
    throw new CliError(`${visible(path)}: no captures in the file.`, undefined, 'capture_invalid');
  }
  return captures;
}
