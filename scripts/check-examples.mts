// Type-checks every ```ts example: the fenced blocks in JSDoc comments under src/ and in README.md and
// docs/*.md, so they cannot rot as the API changes; and checks that every public export carries a
// JSDoc `@example` (STYLE.md).
//   npx tsx scripts/check-examples.mts   (prints file:line:col for each error; exit 1 on any)
//
// Each block becomes its own module, compiled with the project's tsconfig (its `paths` map the public
// names, `@svc/webhooks/…`, to src/). Examples use names they do not define (`secret`, `payload`,
// `suppress`, …) and may leave out the import of a public export. After a first compile, every name
// TypeScript reports as not found is either imported from the public entry that exports it (so a
// wrong use of it is still an error) or, when no entry exports it, declared `any`; then the blocks are
// compiled again. Wrong options, wrong imports and wrong calls of the API remain errors.
//
// A block in the docs that is deliberately not a whole program can opt out with ```ts nocheck; JSDoc
// blocks cannot. A .ts file that a docs shell block writes with a heredoc (`cat > app.ts <<'TS'`) is
// compiled as a block too.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/** One fenced ```ts block: where it is, and its code. */
export interface Example {
  /** Path relative to the repository root. */
  file: string;
  /** 1-based line of the block's first code line in `file`. */
  line: number;
  code: string;
}

/** One type error in an example, at its place in the source file. */
export interface ExampleError {
  file: string;
  line: number;
  column: number;
  code: number;
  message: string;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const FENCE_OPEN = /^(\s*)```(?:ts|typescript)(?:\s+(.*))?$/;
const FENCE_CLOSE = /^\s*```\s*$/;

// "Cannot find name 'x'" and its variants (did you mean…, a test runner's, Node's, Bun's or Deno's
// globals, `{ secret }` shorthand of an undefined name).
const NOT_FOUND = new Set([2304, 2552, 2580, 2582, 2591, 2593, 2867, 2868, 18004]);
// "A 'return' statement can only be used within a function body": the block is a handler's body.
const TOP_LEVEL_RETURN = 1108;
// Declarations every example sees: an app's own modules behind Next's `@/` alias are placeholders.
const AMBIENT = "declare module '@/*';\n";

/** ```ts blocks in `lines` (already stripped of any comment prefix); `offset` is the 0-based line of lines[0]. */
function fences(file: string, lines: string[], offset: number, optOut: boolean): Example[] {
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE_OPEN.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !FENCE_CLOSE.test(lines[end]!)) end++;
    const skip = optOut && /\bnocheck\b/.test(open[2] ?? '');
    if (!skip) {
      const code = lines
        .slice(start, end)
        .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
        .join('\n');
      out.push({ file, line: offset + start + 1, code });
    }
    i = end;
  }
  return out;
}

/** The ```ts blocks of the JSDoc comments (`/** … *\/`) of one TypeScript source. */
export function examplesInSource(file: string, text: string): Example[] {
  const out: Example[] = [];
  for (const match of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const offset = text.slice(0, match.index).split('\n').length - 1;
    const lines = match[0].split('\n').map((line) => line.replace(/^\s*\/?\*+\/?(?: |$)/, ''));
    out.push(...fences(file, lines, offset, false));
  }
  return out;
}

/**
 * The TypeScript files that the shell blocks of a Markdown page write with a heredoc
 * (`cat > server.ts <<'TS'` … `TS`): the page shows the file once, CI runs it, and this compiles it.
 */
function heredocs(file: string, lines: string[]): Example[] {
  const out: Example[] = [];
  let inShell = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*```/.test(line)) {
      inShell = !inShell && /^\s*```(?:sh|bash|shell)\s*$/.test(line);
      continue;
    }
    const open = inShell ? /^\s*cat\s*>\s*\S+\.tsx?\s*<<-?\s*'?(\w+)'?\s*$/.exec(line) : null;
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end]!.trim() !== open[1]) end++;
    out.push({ file, line: start + 1, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return out;
}

/** The ```ts blocks of one Markdown file, and the TypeScript files its shell blocks write. */
export function examplesInMarkdown(file: string, text: string): Example[] {
  const lines = text.split('\n');
  return [...fences(file, lines, 0, true), ...heredocs(file, lines)];
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Every example of the repository: JSDoc in src/**\/*.ts, then README.md and docs/*.md. */
export function collectExamples(root = ROOT): Example[] {
  const read = (path: string) => readFileSync(path, 'utf8');
  const sources = walk(join(root, 'src'))
    .filter((path) => path.endsWith('.ts'))
    .sort();
  const docs = [
    join(root, 'README.md'),
    ...readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => join(root, 'docs', name)),
  ];
  return [
    ...sources.flatMap((path) => examplesInSource(relative(root, path), read(path))),
    ...docs.flatMap((path) => examplesInMarkdown(relative(root, path), read(path))),
  ];
}

function compilerOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, configPath);
  return {
    ...parsed.options,
    noEmit: true,
    // An example's `import { X }` of a type is fine for a reader; the project's own files keep
    // verbatimModuleSyntax (checked by `npm run typecheck`).
    verbatimModuleSyntax: false,
    isolatedModules: false,
    noUnusedLocals: false,
    noUnusedParameters: false,
    // A callback passed to a placeholder (`any`) gets untyped parameters; that is not the example's fault.
    noImplicitAny: false,
  };
}

/** entries.json: subpath -> source file. */
function readEntries(root: string): Record<string, string> {
  return JSON.parse(readFileSync(join(root, 'entries.json'), 'utf8'));
}

/** The names each public entry exports (entries.json order), from the sources. */
function publicNames(program: ts.Program, root: string): Map<string, string> {
  const entries = readEntries(root);
  const checker = program.getTypeChecker();
  const owner = new Map<string, string>();
  for (const [subpath, file] of Object.entries(entries)) {
    const source = program.getSourceFile(join(root, file));
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) continue;
    const id = subpath === '.' ? '@svc/webhooks' : `@svc/webhooks/${subpath}`;
    for (const exported of checker.getExportsOfModule(symbol)) {
      if (!owner.has(exported.name)) owner.set(exported.name, id);
    }
  }
  return owner;
}

/**
 * Type-checks `examples`; returns their errors with each one's place in its source file. An empty
 * list means every example compiles.
 */
export function checkExamples(examples: readonly Example[], root = ROOT): ExampleError[] {
  const options = compilerOptions(root);
  // Virtual files beside the file each block is in, so node_modules, the `paths` and an internal
  // module's relative imports resolve as they would there.
  const names = examples.map((example, i) => join(root, dirname(example.file), `__example_${i}.ts`));
  const ambient = join(root, '__examples_ambient.d.ts');
  const texts = new Map<string, string>([[ambient, AMBIENT]]);
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (path) => texts.has(path) || fileExists.call(host, path);
  host.readFile = (path) => texts.get(path) ?? readFile.call(host, path);
  host.getSourceFile = (path, language, onError, create) => {
    const text = texts.get(path);
    if (text !== undefined) return ts.createSourceFile(path, text, language, true);
    return getSourceFile.call(host, path, language, onError, create);
  };

  const diagnosticsOf = (program: ts.Program, name: string) => {
    const file = program.getSourceFile(name);
    return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
  };
  const notFound = (diagnostics: readonly ts.Diagnostic[]) =>
    diagnostics
      .filter((d) => NOT_FOUND.has(d.code) && d.file !== undefined && d.start !== undefined)
      .map((d) => d.file!.text.slice(d.start!, d.start! + d.length!))
      .filter((id) => /^[A-Za-z_$][\w$]*$/.test(id));

  // Pass 1: each block as written (a module, so blocks do not share names).
  examples.forEach((example, i) => texts.set(names[i]!, `${example.code}\nexport {};\n`));
  const entryFiles = Object.values(readEntries(root)).map((file) => join(root, file));
  const roots = [ambient, ...entryFiles, ...names];
  let program = ts.createProgram(roots, options, host);
  const owner = publicNames(program, root);
  const final = new Map<string, readonly ts.Diagnostic[]>();
  const added = names.map(() => new Set<string>());
  const bodies: string[] = [];
  let pending: number[] = [];
  names.forEach((name, i) => {
    const diagnostics = diagnosticsOf(program, name);
    const code = examples[i]!.code;
    // A block with a top-level `return` is a function body: wrapped after its imports, on the
    // same line, so line numbers still match.
    bodies[i] = diagnostics.some((d) => d.code === TOP_LEVEL_RETURN) ? wrapBody(code) : code;
    for (const id of notFound(diagnostics)) added[i]!.add(id);
    if (bodies[i] === code && added[i]!.size === 0) final.set(name, diagnostics);
    else pending.push(i);
  });

  // Passes 2 to 4: names not found are imported from the public entry exporting them, or declared
  // `any`; the additions go after the code (imports and `var` hoist), so lines keep their numbers.
  // Only the blocks that changed are checked again; a block is done once no new name is missing.
  for (let pass = 0; pass < 3 && pending.length > 0; pass++) {
    for (const i of pending) {
      const imports = new Map<string, string[]>();
      const declared: string[] = [];
      for (const id of added[i]!) {
        const from = owner.get(id);
        if (from) imports.set(from, [...(imports.get(from) ?? []), id]);
        else declared.push(`declare var ${id}: any; type ${id} = any;`);
      }
      const prelude = [
        ...[...imports].map(([from, ids]) => `import { ${ids.join(', ')} } from '${from}';`),
        ...declared,
      ];
      texts.set(names[i]!, `${bodies[i]!}\nexport {};\n${prelude.join('\n')}\n`);
    }
    program = ts.createProgram(roots, options, host, program);
    const next: number[] = [];
    for (const i of pending) {
      const diagnostics = diagnosticsOf(program, names[i]!);
      const before = added[i]!.size;
      for (const id of notFound(diagnostics)) added[i]!.add(id);
      if (added[i]!.size > before && pass < 2) next.push(i);
      else final.set(names[i]!, diagnostics);
    }
    pending = next;
  }

  const errors: ExampleError[] = [];
  names.forEach((name, i) => {
    const example = examples[i]!;
    const lineCount = example.code.split('\n').length;
    for (const d of final.get(name) ?? []) {
      if (d.category !== ts.DiagnosticCategory.Error || d.file?.fileName !== name) continue;
      const at = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
      // An error in the added lines (an import the block's own code misuses) is shown at its start.
      const inCode = at.line < lineCount;
      errors.push({
        file: example.file,
        line: example.line + (inCode ? at.line : 0),
        column: inCode ? at.character + 1 : 1,
        code: d.code,
        message: ts.flattenDiagnosticMessageText(d.messageText, ' '),
      });
    }
  });
  return errors;
}

/** A public export whose declaration has no `@example` in its JSDoc. */
export interface MissingExample {
  file: string;
  line: number;
  /** The public name, as `@svc/webhooks/<subpath>#<name>`. */
  name: string;
}

/**
 * The public exports (every name of every entry of entries.json) declared without a JSDoc
 * `@example` (STYLE.md: every public export carries one). Overloads count once: the example may sit
 * on any of their declarations.
 */
export function exportsWithoutExample(root = ROOT): MissingExample[] {
  const entries = readEntries(root);
  const program = ts.createProgram(
    Object.values(entries).map((file) => join(root, file)),
    compilerOptions(root),
  );
  const checker = program.getTypeChecker();
  const hasExample = (node: ts.Node) => ts.getJSDocTags(node).some((tag) => tag.tagName.text === 'example');
  const seen = new Set<ts.Symbol>();
  const out: MissingExample[] = [];
  for (const [subpath, file] of Object.entries(entries)) {
    const source = program.getSourceFile(join(root, file));
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) continue;
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (seen.has(symbol)) continue;
      seen.add(symbol);
      const declarations = symbol.declarations ?? [];
      // `export const x = …`: the JSDoc sits on the variable statement.
      const documented = (d: ts.Declaration) =>
        hasExample(d) || (ts.isVariableDeclaration(d) && hasExample(d.parent.parent));
      if (declarations.length === 0 || declarations.some(documented)) continue;
      const first = declarations[0]!;
      const at = first.getSourceFile().getLineAndCharacterOfPosition(first.getStart());
      out.push({
        file: relative(root, first.getSourceFile().fileName),
        line: at.line + 1,
        name: `${subpath === '.' ? '@svc/webhooks' : `@svc/webhooks/${subpath}`}#${exported.name}`,
      });
    }
  }
  return out;
}

/** `code` with everything after its imports inside an async function, without adding lines. */
function wrapBody(code: string): string {
  const source = ts.createSourceFile('block.ts', code, ts.ScriptTarget.Latest);
  const imports = source.statements.filter(ts.isImportDeclaration);
  const at = imports.length > 0 ? imports[imports.length - 1]!.end : 0;
  return `${code.slice(0, at)} async function __example(): Promise<unknown> {${code.slice(at)}\n}`;
}

/** `file:line:col - error TSnnnn: message` lines, one per error. */
export function formatErrors(errors: readonly ExampleError[]): string {
  return errors
    .map((e) => `${e.file}:${e.line}:${e.column} - error TS${e.code}: ${e.message}`)
    .join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const undocumented = exportsWithoutExample();
  for (const missing of undocumented) {
    console.error(`${missing.file}:${missing.line} - ${missing.name} is public but has no \`@example\``);
  }
  const examples = collectExamples();
  const errors = checkExamples(examples);
  if (errors.length > 0) {
    console.error(formatErrors(errors));
    console.error(`\n${errors.length} error(s) in the ${examples.length} ts examples.`);
  }
  if (errors.length > 0 || undocumented.length > 0) process.exit(1);
  console.log(`${examples.length} ts examples type-check; every public export has one.`);
}
