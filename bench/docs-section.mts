/**
 * Writes one bench's section of docs/benchmarks.md between its markers
 * (`<!-- bench:NAME:start -->` … `<!-- bench:NAME:end -->`), appending it when the markers are not
 * there yet and creating the file when it is missing.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../docs/benchmarks.md', import.meta.url);

export function writeBenchSection(name: string, section: string): void {
  let doc = '# Benchmarks\n';
  try {
    doc = readFileSync(file, 'utf8');
  } catch {}
  const open = `<!-- bench:${name}:start -->`;
  const close = `<!-- bench:${name}:end -->`;
  const block = `${open}\n${section.trim()}\n${close}`;
  const from = doc.indexOf(open);
  const to = doc.indexOf(close);
  doc =
    from !== -1 && to > from
      ? doc.slice(0, from) + block + doc.slice(to + close.length)
      : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, doc);
  console.log(`wrote docs/benchmarks.md section bench:${name}`);
}
