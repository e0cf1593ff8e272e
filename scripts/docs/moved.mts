// Links in the Markdown to a section that moved to a page of its own (scripts/docs/moved.json), written
// to the section's new place. The site already sends them there (scripts/docs/markdown.mts); on a code
// host a link to the old page lands at its top, so the Markdown should name the new page.
//   npx tsx scripts/docs/moved.mts           rewrites them in README.md, docs/*.md, examples/*/README.md
//   npx tsx scripts/docs/moved.mts --check   lists them and exits 1 when there are any
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const moved = JSON.parse(read('scripts/docs/moved.json')) as Record<string, string>;
const home = (JSON.parse(read('package.json')) as { homepage: string }).homepage;
const LINK = /\]\(([^)\s]+)((?:\s+"[^"]*")?)\)/g;

/** `href` of a link in `file` written to the moved section's new place, or undefined when it did not move. */
function newHref(file: string, href: string): string | undefined {
  const [path = '', anchor] = href.split('#');
  if (!anchor) return undefined;
  if (href.startsWith(home)) {
    const to = moved[`docs/${path.slice(home.length).replace(/\.html$/, '.md')}#${anchor}`];
    return to && `${home}${to.replace(/^docs\//, '').replace(/\.md#/, '.html#')}`;
  }
  if (/^[a-z]+:/i.test(href) || href.startsWith('//')) return undefined;
  const to = moved[`${path ? posix.normalize(posix.join(posix.dirname(file), path)) : file}#${anchor}`];
  if (!to) return undefined;
  const [target = '', targetAnchor = ''] = to.split('#');
  return `${target === file ? '' : posix.relative(posix.dirname(file), target)}#${targetAnchor}`;
}

const files = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'examples'))
    .map((d) => `examples/${d}/README.md`)
    .filter((f) => existsSync(join(ROOT, f))),
];
const check = process.argv.includes('--check');
const found: string[] = [];
for (const file of files) {
  const text = read(file);
  const out = text.replace(LINK, (link, href: string, title: string) => {
    const to = newHref(file, href);
    if (!to) return link;
    found.push(`${file}: ${href} -> ${to}`);
    return `](${to}${title})`;
  });
  if (!check && out !== text) writeFileSync(join(ROOT, file), out);
}
console.log(found.length ? found.join('\n') : 'no link to a moved section');
if (check && found.length > 0) process.exit(1);
