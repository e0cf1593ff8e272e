import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  checkExamples,
  collectExamples,
  type Example,
  type ExampleError,
  examplesInMarkdown,
  examplesInSource,
  exportsWithoutExample,
  formatErrors,
} from '../../scripts/check-examples.mjs';
import { root } from './dist.js';

// Blocks that must fail or pass, checked in the same compile as the real ones (one program).
const PROBES: Example[] = [
  {
    file: 'probe/wrong-option.ts',
    line: 10,
    code: "import { createMailReceiver } from '@svc/webhooks';\n\ncreateMailReceiver({ secret, onn: {} });",
  },
  { file: 'probe/wrong-import.ts', line: 1, code: "import { createMailReciever } from '@svc/webhooks';" },
  {
    file: 'probe/misspelt-field.ts',
    line: 1,
    code: "receiver.on('bounced', (event: MailEventOf<'bounced'>) => event.payload.mesage_id);",
  },
  { file: 'probe/wrong-call.ts', line: 1, code: 'const ok: boolean = await verifySignature(body, header);' },
  {
    file: 'probe/placeholders.ts',
    line: 1,
    code: [
      "import { createMailReceiver } from '@svc/webhooks';",
      'const receiver = createMailReceiver({ secret: process.env.SECRET! });',
      "receiver.on('bounced', (event) => suppress(event.payload.to));",
      "if (!mailReceiver) return 'early';",
    ].join('\n'),
  },
];

let examples: Example[];
let errors: ExampleError[];
beforeAll(() => {
  examples = collectExamples(root);
  errors = checkExamples([...examples, ...PROBES], root);
}, 600_000);

const probe = (file: string) => errors.filter((error) => error.file === file);

describe('ts examples (scripts/check-examples.mts, also a gate of .ci/run)', () => {
  it('every ```ts block in src JSDoc, README.md and docs/*.md type-checks', () => {
    const real = errors.filter((error) => !error.file.startsWith('probe/'));
    expect(formatErrors(real)).toBe('');
  });

  it('collects an example for every @example tag in src', () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
        d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
      );
    for (const path of walk(join(root, 'src'))) {
      const file = relative(root, path);
      const tags = readFileSync(path, 'utf8').match(/^\s*\*\s*@example\s*$/gm)?.length ?? 0;
      const found = examples.filter((example) => example.file === file).length;
      expect(found, `${file}: ${tags} @example tags`).toBeGreaterThanOrEqual(tags);
    }
    expect(examples.filter((example) => example.file.startsWith('docs/')).length).toBeGreaterThan(10);
  });

  it('reports a wrong option, a wrong import, a misspelt field and a wrong call at file:line', () => {
    expect(probe('probe/wrong-option.ts')).toEqual([
      expect.objectContaining({ line: 12, code: 2353, message: expect.stringContaining("'onn'") }),
    ]);
    expect(probe('probe/wrong-import.ts')).toEqual([
      expect.objectContaining({ line: 1, column: 10, code: 2724 }),
    ]);
    expect(probe('probe/misspelt-field.ts').map((error) => error.message)).toEqual([
      expect.stringContaining("'mesage_id'"),
    ]);
    expect(probe('probe/wrong-call.ts').length).toBeGreaterThan(0);
  });

  it('placeholder names are `any`, a top-level return is a handler body; public names keep their types', () => {
    expect(probe('probe/placeholders.ts')).toEqual([]);
  });
});

describe('every public export has an @example', () => {
  it('holds for the package', () => {
    expect(exportsWithoutExample(root)).toEqual([]);
  }, 120_000);

  it('names an undocumented export of any entry, once, with its file and line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-examples-'));
    try {
      mkdirSync(join(dir, 'src'));
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true } }));
      writeFileSync(join(dir, 'entries.json'), JSON.stringify({ '.': 'src/a.ts', extra: 'src/b.ts' }));
      const doc = '/**\n * Documented.\n *\n * @example\n * ```ts\n * f();\n * ```\n */\n';
      writeFileSync(
        join(dir, 'src/a.ts'),
        `${doc}export function f() {}\n/** No example. */\nexport const g = 1;\n${doc}export const h = 2;\n`,
      );
      writeFileSync(join(dir, 'src/b.ts'), "export { f, g } from './a.js';\nexport type T = string;\n");
      expect(exportsWithoutExample(dir)).toEqual([
        { file: 'src/a.ts', line: 11, name: '@svc/webhooks#g' },
        { file: 'src/b.ts', line: 2, name: '@svc/webhooks/extra#T' },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('example extraction', () => {
  it('finds ```ts blocks in JSDoc with the line of their first code line', () => {
    const text = [
      '/**',
      ' * Does a thing.',
      ' *',
      ' * @example',
      ' * ```ts',
      " * import { x } from '@svc/webhooks';",
      ' *   x(1);',
      ' * ```',
      ' */',
      'export const y = 1; // ```ts outside a comment is not an example',
    ].join('\n');
    expect(examplesInSource('src/y.ts', text)).toEqual([
      { file: 'src/y.ts', line: 6, code: "import { x } from '@svc/webhooks';\n  x(1);" },
    ]);
  });

  it('finds ```ts blocks in Markdown, skipping ```ts nocheck and other languages', () => {
    const text = ['# T', '```ts', 'a();', '```', '```ts nocheck', '{ shape }', '```', '```sh', 'ls', '```'];
    expect(examplesInMarkdown('docs/t.md', text.join('\n'))).toEqual([
      { file: 'docs/t.md', line: 3, code: 'a();' },
    ]);
  });

  it("finds the .ts files that shell blocks write with a heredoc (`cat > app.ts <<'TS'`)", () => {
    const text = [
      '# T',
      '```sh',
      'mkdir app',
      "cat > app.ts <<'TS'",
      'b();',
      'c();',
      'TS',
      'npx tsx app.ts',
      '```',
    ];
    const other = [
      '```sh',
      "cat > notes.txt <<'EOF'",
      'd();',
      'EOF',
      '```',
      '```ts nocheck',
      "cat > x.ts <<'TS'",
      '```',
    ];
    expect(examplesInMarkdown('docs/t.md', [...text, ...other].join('\n'))).toEqual([
      { file: 'docs/t.md', line: 5, code: 'b();\nc();' },
    ]);
  });
});
