/**
 * Versions for the machine line of a benchmark's section: a command's, an installed package's.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The first group of `pattern` in what `command args` prints, or `unknown`. */
export function commandVersion(command: string, args: string[], pattern: RegExp): string {
  try {
    return pattern.exec(execFileSync(command, args, { encoding: 'utf8' }))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The version of a package installed in this repository's node_modules. */
export function packageVersion(name: string): string {
  return JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8'))
    .version;
}
