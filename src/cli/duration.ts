/** Durations as the commands take them: `90s`, `3m`, `2h`, `14d` (and `0` for none where allowed). */
import { CliError } from './exit-codes.js';

/** `value` in ms; a {@link CliError} naming `option` for anything else. */
export function durationMs(value: string, option: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value.trim());
  if (!match) throw new CliError(`${option} "${value}" is not a duration like 90s, 3m or 2h.`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 'ms'];
  return Math.round(Number(match[1]) * unit);
}
