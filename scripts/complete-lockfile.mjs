#!/usr/bin/env node
// Completes package-lock.json with the platform-specific optional packages that `npm install` leaves
// out when the registry it reaches does not serve them (a mirror with only this machine's platform).
// npm 11's `npm ci` checks every optional dependency named by a locked package and refuses a lockfile
// without them, although it would skip them on this platform anyway. Each missing entry is added with
// its version and the `os`/`cpu`/`libc` read from its name, marked `dev` and `optional` like its
// siblings, so `npm ci` validates and skips it here. Run after `npm install` changes the lockfile:
//   node scripts/complete-lockfile.mjs        (writes package-lock.json; prints what it added)
//   node scripts/complete-lockfile.mjs --check (exit 1 when entries are missing)
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

const OS = ['android', 'darwin', 'linux', 'win32', 'freebsd', 'openbsd', 'openharmony', 'netbsd', 'sunos', 'aix'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  if (!os || !cpu) return null;
  const platform = { cpu: [cpu], os: [os] };
  if (os === 'linux') platform.libc = [parts.some((p) => p.startsWith('musl')) ? 'musl' : 'glibc'];
  return platform;
}

/** Where `name` resolves from the package at `location` (node's lookup, walking up). */
function resolveFrom(location, name) {
  let dir = location;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!dir) return null;
    const index = dir.lastIndexOf('node_modules/');
    dir = index <= 0 ? '' : dir.slice(0, index - 1);
  }
}

const added = [];
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolveFrom(location, name)) continue;
    const platform = platformOf(name);
    if (!platform || !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(range)) {
      console.error(`cannot complete ${name}@${range} (needed by ${location || 'the root'}): not an exact platform package`);
      process.exitCode = 1;
      continue;
    }
    // Beside its parent's hoisted place: the root node_modules unless the parent is nested.
    const target = location.includes('/node_modules/') ? `${location}/node_modules/${name}` : `node_modules/${name}`;
    packages[target] = { version: range, ...platform, dev: entry.dev ?? undefined, license: undefined, optional: true };
    added.push(`${name}@${range}`);
  }
}

if (process.argv.includes('--check')) {
  if (added.length) console.error(`package-lock.json lacks ${added.length} optional platform packages: run node scripts/complete-lockfile.mjs`);
  process.exit(added.length ? 1 : process.exitCode ?? 0);
}
if (added.length) {
  lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(added.length ? `added ${added.length}: ${added.join(' ')}` : 'package-lock.json is complete');
