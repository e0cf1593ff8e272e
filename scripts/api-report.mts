// The public API report: one etc/<entry>.api.md per entry of entries.json, listing every export's
// declaration as a user's editor shows it, so a change to the public surface shows in review.
//   npm run api:update   (npx tsx scripts/api-report.mts)          rewrites etc/*.api.md
//   npm run api:check    (npx tsx scripts/api-report.mts --check)  exit 1 when etc/ differs (CI)
// Generated from the source entries with the TypeScript compiler (scripts/docs/api-model.mts).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ApiEntry, apiModel, ROOT } from './docs/api-model.mts';

const DIR = join(ROOT, 'etc');

/** The report of one entry, as committed. */
export function reportOf(entry: ApiEntry): string {
  const lines = [
    `# API report: \`${entry.importPath}\``,
    '',
    `<!-- Generated from ${entry.source} by \`npm run api:update\`. Do not edit: CI (\`npm run api:check\`) compares it with the source. -->`,
    '',
    `${entry.exports.length} exports.`,
  ];
  for (const e of entry.exports) {
    lines.push('', `## ${e.name} (${e.kind})`, '', '```ts', e.declaration.trimEnd(), '```');
    const deprecated = e.tags.find((tag) => tag.name === 'deprecated');
    if (deprecated) lines.push('', `Deprecated: ${deprecated.text || 'yes'}`);
  }
  if (entry.leaks.length > 0) {
    lines.push('', '## Types named here that no entry exports', '');
    for (const leak of entry.leaks) lines.push(`- ${leak}`);
  }
  return `${lines.join('\n')}\n`;
}

function main() {
  const check = process.argv.includes('--check');
  const expected = new Map(apiModel().map((entry) => [`${entry.id}.api.md`, reportOf(entry)]));
  const present = existsSync(DIR) ? readdirSync(DIR).filter((f) => f.endsWith('.api.md')) : [];
  const changed = [...expected].filter(([file, text]) => !existsSync(join(DIR, file)) || readFileSync(join(DIR, file), 'utf8') !== text);
  const stale = present.filter((file) => !expected.has(file));
  if (check) {
    if (changed.length === 0 && stale.length === 0) {
      console.log(`api report: etc/ matches the ${expected.size} entries`);
      return;
    }
    for (const [file] of changed) console.error(`api report: etc/${file} differs from the source`);
    for (const file of stale) console.error(`api report: etc/${file} names no entry of entries.json`);
    console.error('The public API changed: run `npm run api:update` and commit etc/ (review the diff).');
    process.exit(1);
  }
  mkdirSync(DIR, { recursive: true });
  for (const [file, text] of changed) writeFileSync(join(DIR, file), text);
  for (const file of stale) rmSync(join(DIR, file));
  console.log(`api report: ${changed.length} written, ${stale.length} removed, ${expected.size} entries`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
