/**
 * What the throughput benches share: the bodies they sign, the timed loop and the medians.
 */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';

/**
 * A valid email-service `delivered` event (or `event`) of exactly `size` bytes (padding in
 * `response`).
 */
export function mailBody(size: number, event = 'delivered'): Buffer {
  const base = {
    event,
    client_id: 'cl_8f2a',
    message_id: 'msg_01HZX3K9QF',
    to: 'ana@example.com',
    provider: 'gmail',
    response: '',
    latency_ms: 412,
    timestamp: '2026-11-22T18:00:00.000Z',
  };
  const empty = Buffer.byteLength(JSON.stringify(base));
  base.response = `250 2.0.0 OK ${'x'.repeat(Math.max(0, size - empty - 13))}`;
  const body = Buffer.from(JSON.stringify(base));
  if (body.length !== size) throw new Error(`body is ${body.length} bytes, wanted ${size}`);
  return body;
}

/** The `sha256=` signature header of `body` under `secret`, from node:crypto (never our signer). */
export function signatureOf(body: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Runs `run` for about `ms` milliseconds; returns operations per second. Awaits only when it must. */
export async function measure(run: () => unknown, ms: number): Promise<number> {
  const deadline = process.hrtime.bigint() + BigInt(ms) * 1_000_000n;
  const started = process.hrtime.bigint();
  let ops = 0;
  let now = started;
  while (now < deadline) {
    // Batches keep the clock reads out of the measurement for fast contenders.
    for (let i = 0; i < 16; i++) {
      const result = run();
      if (result instanceof Promise) await result;
    }
    ops += 16;
    now = process.hrtime.bigint();
  }
  return (ops * 1e9) / Number(now - started);
}

/** The median of `values` (the upper one of an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A table cell: operations per second and, in parentheses, the time relative to the ceiling. */
export function ratioCell(opsPerSec: number, ratio: number): string {
  return `${Math.round(opsPerSec).toLocaleString('en-US')} (${ratio.toFixed(2)}x)`;
}

/** The request headers of one 1 KB delivery: the email service's, or GitHub's for @octokit/webhooks. */
export function deliveryHeaders(style: 'mail' | 'github', id: string, sig: string): Record<string, string> {
  return style === 'mail'
    ? {
        'content-type': 'application/json',
        'x-svcmail-event': 'delivered',
        'x-svcmail-id': id,
        'x-svcmail-sig': sig,
      }
    : {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': id,
        'x-hub-signature-256': sig,
      };
}

/** One measured contender at one body size. */
export type RatioRow = { size: string; name: string; opsPerSec: number; ratio: number };

/** A markdown table: one line per contender (`names`, default all in row order), one `ops/s (ratio)` cell per size label. */
export function ratioTable(
  rows: readonly RatioRow[],
  sizes: readonly string[],
  names: readonly string[] = [...new Set(rows.map((r) => r.name))],
): string[] {
  return [
    `| contender | ${sizes.join(' | ')} |`,
    `|---|${sizes.map(() => '---:').join('|')}|`,
    ...names.map((name) => {
      const cells = sizes.map((size) => {
        const row = rows.find((r) => r.size === size && r.name === name)!;
        return ratioCell(row.opsPerSec, row.ratio);
      });
      return `| ${name} | ${cells.join(' | ')} |`;
    }),
  ];
}
