/**
 * docs/getting-started.md's "TypeScript" table says which entries need @types/node; .ci/run compiles
 * every other entry without it (.ci/consumer/node-entries.json). The two lists are one list, and the
 * table names every entry once.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

it('the entries docs/getting-started.md says need @types/node are the ones CI compiles with it only', () => {
  const text = read('docs/getting-started.md');
  const section = text.slice(text.indexOf('### TypeScript'), text.indexOf('App bundlers drop'));
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| entry') && !line.startsWith('|---'));
  const entriesOf = (row: string) =>
    [...(row.split('|')[1] ?? '').matchAll(/`(@svc\/webhooks)?(\/[\w/-]+)?`/g)].map(
      (m) => (m[2] ?? '/').slice(1) || '.',
    );
  const needs = rows.filter((row) => row.split('|')[2]?.trim().startsWith('yes')).flatMap(entriesOf);
  const named = rows.flatMap(entriesOf);
  const peers = Object.keys(JSON.parse(read('.ci/consumer/peer-entries.json')));
  const nodeEntries: string[] = JSON.parse(read('.ci/consumer/node-entries.json'));
  // The peers' entries are compiled with their peer (which needs Node's types) only.
  expect(needs.filter((entry) => !peers.includes(entry)).sort()).toEqual([...nodeEntries].sort());
  const entries = Object.keys(JSON.parse(read('entries.json')));
  const bare = entries.filter((entry) => !peers.includes(entry) && entry !== 'fastify');
  expect([...new Set(named.filter((entry) => !peers.includes(entry)))].sort()).toEqual(bare.sort());
});
