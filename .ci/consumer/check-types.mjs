// `node check-types.mjs <tsc.js> '<subpaths as JSON>' [--without-node | --peers]`: type-checks the installed package as an app
// compiles it, with TypeScript's default `skipLibCheck: false` and no optional peer installed: a module
// importing every subpath given (ESM, and CJS under nodenext), plus types/inferred.ts, which exports
// values inferred from each factory and is compiled with `declaration: true`. Once under
// `moduleResolution: nodenext` and once under `bundler`; one `ok` / `FAIL` line each. Then, alone in
// a program of its own under each resolution, types/testing-only.ts: the same from
// `@svc/webhooks/testing` only, so every type it prints must come from that entry (beside a module
// that imports the root, the compiler would name the root's `Clock` instead).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [tsc, subpathsJson, mode] = process.argv.slice(2);
// `--peers`: the optional peers are installed; the given entries (those that need one) are compiled,
// each with `import` and `require`, beside types/peers.ts (and its copy peers.cts).
const withPeers = mode === '--peers';
// `--without-node`: @types/node is not installed, so only the entries that .ci/consumer/node-entries.json
// (the list docs/getting-started.md gives) does not name are compiled, with `types: []`.
const withoutNode = mode === '--without-node';
const nodeEntries = withoutNode
  ? JSON.parse(readFileSync(join(import.meta.dirname, 'node-entries.json'), 'utf8'))
  : [];
const version = execFileSync(process.execPath, [tsc, '--version'], { encoding: 'utf8' }).trim();
const dir = join(import.meta.dirname, 'types');
const installed = join(import.meta.dirname, 'node_modules/@svc/webhooks');
const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
const peers = Object.keys(pkg.peerDependencies ?? {});
// An entry whose own declarations import a peer (./fastify names `fastify`'s plugin type) is for apps
// that have that peer; every other entry must compile without any.
const namesPeer = (subpath) => {
  // Both branches: an entry's `import` types are often one line re-exporting its `require` ones
  // (scripts/one-declaration-set.mjs).
  const { import: esm, require: cjs } = pkg.exports[subpath === '.' ? '.' : `./${subpath}`];
  // Without comments: a JSDoc example may import a peer.
  const text = [esm.types, cjs.types]
    .map((types) => readFileSync(join(installed, types), 'utf8'))
    .join('\n')
    .replace(/\/\*[\s\S]*?\*\//g, '');
  return peers.find((peer) => new RegExp(`from '${peer}(/[^']*)?'`).test(text));
};
const subpaths = JSON.parse(subpathsJson).filter((subpath) => {
  if (withPeers) return true;
  if (nodeEntries.includes(subpath)) return false;
  const peer = namesPeer(subpath);
  if (peer) console.log(`note: ${subpath} is left out, its declarations import the peer ${peer}`);
  return !peer;
});
const specifiers = subpaths.map((s) => (s === '.' ? '@svc/webhooks' : `@svc/webhooks/${s}`));
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
const imports = specifiers.map((s, i) => `import * as entry${i} from '${s}';`).join('\n');
const uses = `export const entries = [${specifiers.map((_, i) => `entry${i}`).join(', ')}];\n`;
writeFileSync(join(dir, 'entries.ts'), `${imports}\n${uses}`);
writeFileSync(
  join(dir, 'entries.cts'),
  `${specifiers.map((s, i) => `import entry${i} = require('${s}');`).join('\n')}\n${uses}`,
);

const common = {
  strict: true,
  skipLibCheck: false,
  declaration: true,
  emitDeclarationOnly: true,
  target: 'es2022',
  types: withoutNode ? [] : ['node'],
};
const nodenext = { module: 'nodenext', moduleResolution: 'nodenext' };
const bundler = { module: 'esnext', moduleResolution: 'bundler' };
// [config name, what its ok / FAIL line says, options and files]
// inferred.ts reaches every entry, those needing Node's types included: not compiled without them.
const inferred = withoutNode ? [] : ['inferred.ts'];
if (withPeers) writeFileSync(join(dir, 'peers.cts'), readFileSync(join(dir, 'peers.ts'), 'utf8'));
const configs = withPeers
  ? [
      [
        'peers-nodenext',
        'nodenext, with the peers',
        { ...nodenext, files: ['entries.ts', 'entries.cts', 'peers.ts', 'peers.cts'] },
      ],
      ['peers-bundler', 'bundler, with the peers', { ...bundler, files: ['entries.ts', 'peers.ts'] }],
    ]
  : [
      ['nodenext', 'nodenext', { ...nodenext, files: ['entries.ts', 'entries.cts', ...inferred] }],
      ['bundler', 'bundler', { ...bundler, files: ['entries.ts', ...inferred] }],
      ['testing-nodenext', 'nodenext, ./testing alone', { ...nodenext, files: ['testing-only.ts'] }],
      ['testing-bundler', 'bundler, ./testing alone', { ...bundler, files: ['testing-only.ts'] }],
    ];
let failed = false;
const about = `${version}, ${withoutNode ? 'no @types/node' : '@types/node'}${withPeers ? ', the optional peers' : ''}, skipLibCheck false, declaration emit`;
for (const [name, label, { files, ...options }] of configs) {
  const config = `tsconfig.${name}.json`;
  const entries = files.includes('entries.ts') ? specifiers.length : 1;
  writeFileSync(
    join(dir, config),
    JSON.stringify({ compilerOptions: { ...common, ...options, outDir: `out-${name}` }, files }, null, 2),
  );
  try {
    execFileSync(process.execPath, [tsc, '-p', config], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
    console.log(`ok types (moduleResolution ${label}, ${about}): ${entries} ${entries === 1 ? 'entry' : 'entries'}`);
  } catch (error) {
    failed = true;
    console.log(`${error.stdout ?? ''}${error.stderr ?? ''}`.trimEnd());
    console.log(`FAIL types (moduleResolution ${label}, ${about})`);
  }
}
process.exitCode = failed ? 1 : 0;
