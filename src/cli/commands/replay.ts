/** `svc-webhooks replay CAPTURE --url URL`: re-sends captured deliveries' exact bytes and headers. */
import type { Command } from 'commander';
import { parseCaptures } from '../capture-file.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import { type Answer, isSuccess, parseUrl, post } from '../http.js';
import type { Output } from '../output.js';
import { readBytes } from '../read-input.js';
import { runAction, withJson } from '../run-action.js';
import { visible } from '../visible-text.js';

interface ReplayOptions {
  url?: string;
  line?: string;
}

// Headers of the original connection, not of the delivery: fetch sets its own.
const HOP_BY_HOP = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'proxy-connection',
]);

/** Registers `replay`. */
export function replayCommand(program: Command): void {
  withJson(program.command('replay'))
    .description(
      "re-send captured deliveries' exact bytes and headers (a capture file of the receivers' capture hook)",
    )
    .argument('<capture>', 'the capture file (NDJSON), or - for stdin')
    .requiredOption('--url <url>', 'where to POST them')
    .option('--line <n>', 'only the capture on this line of the file')
    .action(runAction(replay as never));
}

async function replay(out: Output, path: string, options: ReplayOptions): Promise<ExitCode> {
  const url = parseUrl(options.url);
  const text = new TextDecoder().decode(await readBytes(path, 'capture file'));
  let captures = parseCaptures(text, path);
  if (options.line !== undefined) {
    const line = Number(options.line);
    captures = captures.filter((c) => c.line === line);
    if (captures.length === 0)
      throw new CliError(`${path}: no capture on line ${options.line}.`, undefined, 'capture_invalid');
  }
  const progress = out.progress('replaying', captures.length);
  const results = [];
  for (const capture of captures) {
    const headers = Object.fromEntries(
      Object.entries(capture.headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())),
    );
    let answer: Answer;
    try {
      answer = await post(url, headers, capture.body);
    } catch (error) {
      progress.done();
      throw error;
    }
    progress.tick();
    results.push({ line: capture.line, service: capture.service, ...answer });
    if (!out.json) {
      const status = isSuccess(answer.status)
        ? out.color.green(String(answer.status))
        : out.color.red(String(answer.status));
      out.line(
        `${status} line ${capture.line} (${capture.service}, ${capture.body.byteLength} bytes) ${out.color.dim(`${answer.durationMs} ms`)}`,
      );
      if (answer.body) out.line(visible(answer.body, true));
    }
  }
  progress.done();
  const ok = results.every((r) => isSuccess(r.status));
  out.result({ ok, url, replayed: results.length, results });
  return ok ? EXIT.ok : EXIT.failed;
}
