// The reference pages: one markdown document per public entry, from the same JSDoc an editor shows
// (scripts/docs/api-model.mts): every export with its declaration, description, parameters, return
// value, errors and checked examples. `{@link Name}` becomes a link to the export's anchor, on this
// entry's page or on the page of the entry that exports it.
import type { ApiEntry, ApiExport, ApiKind, ApiTag } from './api-model.mts';

const GROUPS: Array<[ApiKind, string]> = [
  ['function', 'Functions'],
  ['variable', 'Values'],
  ['class', 'Classes'],
  ['interface', 'Interfaces'],
  ['type', 'Types'],
  ['enum', 'Enums'],
  ['namespace', 'Namespaces'],
];

/** The reference page path of an entry. */
export const referencePage = (entry: ApiEntry) => `reference/${pageName(entry)}.html`;

/** The root entry's page is `main.html`: `reference/index.html` lists the entries. */
const pageName = (entry: ApiEntry) => (entry.id === 'index' ? 'main' : entry.id);

/** Markdown of the reference page of `entry`; `owners` maps an export name to the entries exporting it. */
export function referenceMarkdown(entry: ApiEntry, owners: Map<string, ApiEntry[]>): string {
  const link = (text: string) => resolveLinks(proseAngles(text), entry, owners);
  const out = [`# ${entry.importPath}`, '', link(entry.moduleDoc), ''];
  const values = entry.exports.filter((e) => e.kind === 'function' || e.kind === 'variable' || e.kind === 'class');
  if (values.length > 0)
    out.push('```ts', `import { ${values.map((e) => e.name).join(', ')} } from '${entry.importPath}';`, '```', '');
  for (const [kind, heading] of GROUPS) {
    const group = entry.exports.filter((e) => e.kind === kind);
    if (group.length === 0) continue;
    out.push(`## ${heading}`, '');
    for (const e of group) out.push(...exportMarkdown(e, link), '');
  }
  return out.join('\n');
}

function exportMarkdown(e: ApiExport, link: (text: string) => string): string[] {
  const out = [`### ${e.name} {#${e.name}}`, '', '```ts', e.declaration.trimEnd(), '```', ''];
  if (e.doc) out.push(link(e.doc), '');
  const tags = (name: string) => e.tags.filter((tag) => tag.name === name);
  const deprecated = tags('deprecated')[0];
  if (deprecated) out.unshift(`> **Deprecated.** ${link(deprecated.text)}`, '');
  const params = tags('param');
  if (params.length > 0) {
    out.push('**Parameters**', '');
    for (const p of params) {
      const [name = '', ...rest] = p.text.split(/\s+/);
      out.push(`- \`${name}\`${rest.length ? `: ${indent(link(rest.join(' ').replace(/^-\s*/, '')))}` : ''}`);
    }
    out.push('');
  }
  for (const [tag, label] of [
    ['returns', 'Returns'],
    ['throws', 'Throws'],
    ['see', 'See'],
    ['default', 'Default'],
  ] as const)
    for (const t of tags(tag)) out.push(`**${label}** ${link(t.text)}`, '');
  if (e.members.some((m) => m.doc)) {
    out.push(e.kind === 'class' ? '**Members**' : '**Properties**', '');
    for (const m of e.members)
      out.push(
        `- \`${m.text.replace(/;$/, '').replace(/\s+/g, ' ')}\`${m.from ? ` (from \`${m.from}\`)` : ''}${m.doc ? `: ${indent(link(m.doc))}` : ''}${memberDefault(m.tags)}`,
      );
    out.push('');
  }
  for (const example of tags('example')) out.push('**Example**', '', example.text.trim(), '');
  return out;
}

const memberDefault = (tags: ApiTag[]) => {
  const value = tags.find((t) => t.name === 'default')?.text;
  return value ? ` Default: ${value}.` : '';
};

/**
 * JSDoc prose is text, not HTML: `Promise<Response>` outside backticks must show as written, not
 * become an unknown element. Code spans and fenced blocks are left as they are.
 */
export const proseAngles = (text: string) =>
  text
    .split(/(```[\s\S]*?```|`[^`\n]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, '&lt;')))
    .join('');

/** Continuation lines of a list item are indented so they stay in the item. */
const indent = (text: string) => text.replace(/\n/g, '\n  ');

/** `{@link Name}`, `{@link Name.member}`, `{@link Name | text}`, `{@link url text}` as markdown links. */
function resolveLinks(text: string, entry: ApiEntry, owners: Map<string, ApiEntry[]>): string {
  return text.replace(/\{@link(?:code|plain)?\s+([^\s|}]+)(?:\s*\|?\s*([^}]*))?\}/g, (_, target: string, label?: string) => {
    const shown = label?.trim() || target;
    if (/^[a-z]+:\/\//.test(target)) return `[${shown}](${target})`;
    const name = target.split('.')[0]!;
    const exportedBy = owners.get(name) ?? [];
    const owner = exportedBy.includes(entry) ? entry : exportedBy[0];
    if (!owner) return `\`${shown}\``;
    const href = owner === entry ? `#${name}` : `${pageName(owner)}.html#${name}`;
    return `[\`${shown}\`](${href})`;
  });
}
