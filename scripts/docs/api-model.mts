// The public API as the TypeScript compiler sees it from the source entries (entries.json): for each
// entry, every export with its declaration as a user's editor shows it (bodies and comments dropped,
// private members left out), its JSDoc and tags, and the types its declaration names that no entry
// exports (an internal type leaking into the public surface). Read by scripts/api-report.mts (the
// committed etc/*.api.md) and scripts/docs/build.mts (the site's reference pages).
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

export type ApiKind = 'function' | 'variable' | 'class' | 'interface' | 'type' | 'enum' | 'namespace';

/** A documented member of an interface or class. */
export interface ApiMember {
  name: string;
  /** The member's declaration, e.g. `path?: string;`. */
  text: string;
  doc: string;
  tags: ApiTag[];
  /** For a member an interface inherits: the type it is declared on (`ReceiverOptions`). */
  from?: string;
}

export interface ApiTag {
  name: string;
  text: string;
}

export interface ApiExport {
  /** The name the entry exports it under. */
  name: string;
  kind: ApiKind;
  /** The declaration(s), one per overload, as a `.d.ts` would show them. */
  declaration: string;
  doc: string;
  tags: ApiTag[];
  members: ApiMember[];
  /** The source file that declares it, relative to the repository root. */
  source: string;
}

export interface ApiEntry {
  /** The key in entries.json: `.`, `verify`, `testing/msw`… */
  subpath: string;
  /** What a user imports: `@svc/webhooks`, `@svc/webhooks/verify`… */
  importPath: string;
  /** A file-name-safe id: `index`, `verify`, `testing-msw`… */
  id: string;
  source: string;
  /** The entry file's `@module` comment. */
  moduleDoc: string;
  exports: ApiExport[];
  /** Types a declaration names that no entry exports, as `Export -> Type (file)`. */
  leaks: string[];
}

const PACKAGE = '@svc/webhooks';
const FORMAT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope;

/** The id of an entry: the file name its reference page and API report use. */
export const entryId = (subpath: string) => (subpath === '.' ? 'index' : subpath.replaceAll('/', '-'));

/** Every public entry of entries.json with its exports, in entries.json's order. */
export function apiModel(): ApiEntry[] {
  const entries = Object.entries(
    JSON.parse(readFileSync(join(ROOT, 'entries.json'), 'utf8')) as Record<string, string>,
  );
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options;
  const program = ts.createProgram(
    entries.map(([, file]) => join(ROOT, file)),
    { ...options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

  const modules = entries.map(([subpath, file]) => {
    const source = program.getSourceFile(join(ROOT, file));
    if (!source) throw new Error(`api-model: ${file} (entries.json) is missing`);
    const module = checker.getSymbolAtLocation(source);
    return { subpath, file, source, symbols: module ? checker.getExportsOfModule(module) : [] };
  });
  const resolve = (symbol: ts.Symbol) =>
    symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const exported = new Set(modules.flatMap((m) => m.symbols.map(resolve)));

  const docOf = (symbol: ts.Symbol) => ts.displayPartsToString(symbol.getDocumentationComment(checker));
  const tagsOf = (symbol: ts.Symbol): ApiTag[] => [
    ...symbol
      .getJsDocTags(checker)
      .filter((tag) => tag.name !== 'example')
      .map((tag) => ({ name: tag.name, text: ts.displayPartsToString(tag.text) })),
    ...examplesOf(symbol),
  ];
  const print = (node: ts.Node, source: ts.SourceFile) =>
    printer.printNode(ts.EmitHint.Unspecified, node, source).replace(/^export (default )?(declare )?/gm, '');

  return modules.map(({ subpath, file, source, symbols }) => {
    const leaks = new Set<string>();
    const list = symbols.map((alias): ApiExport => {
      const symbol = resolve(alias);
      const declarations = (symbol.declarations ?? []).filter(
        (d, _, all) => !(ts.isFunctionDeclaration(d) && d.body && all.length > 1),
      );
      const first = declarations[0];
      if (!first) throw new Error(`api-model: ${subpath} exports ${alias.name} without a declaration`);
      const sourceFile = first.getSourceFile();
      const kind = kindOf(first);
      const text = declarations
        .map((d) => declarationText(d, alias.name, checker, (node) => print(node, d.getSourceFile())))
        .join('\n');
      for (const d of declarations)
        for (const leak of leaksOf(d, checker, exported)) leaks.add(`${alias.name} -> ${leak}`);
      return {
        name: alias.name,
        kind,
        declaration: text,
        doc: docOf(symbol),
        tags: tagsOf(symbol),
        members: kind === 'interface' || kind === 'class' ? membersOf(declarations, checker, print) : [],
        source: relative(ROOT, sourceFile.fileName),
      };
    });
    list.sort((a, b) => a.name.localeCompare(b.name, 'en'));
    return {
      subpath,
      importPath: subpath === '.' ? PACKAGE : `${PACKAGE}/${subpath}`,
      id: entryId(subpath),
      source: file,
      moduleDoc: moduleDocOf(source.text),
      exports: list,
      leaks: [...leaks].sort(),
    };
  });
}

/**
 * The `@example` blocks as written: TypeScript's JSDoc parser ends a tag at any `@word`, even inside
 * a fenced block (`// D1Database: @cloudflare/workers-types`), so they are read from the comment.
 */
function examplesOf(symbol: ts.Symbol): ApiTag[] {
  const examples: ApiTag[] = [];
  for (const declaration of symbol.declarations ?? []) {
    const node = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
    for (const doc of ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)) {
      const text = doc
        .getText()
        .split('\n')
        .map((line) => line.replace(/^\s*\*\s?/, '').replace(/^\/\*\*\s?/, ''))
        .join('\n');
      for (const m of text.matchAll(/@example[^\n]*\n([\s\S]*?```[^\n]*\n[\s\S]*?\n```)/g))
        examples.push({ name: 'example', text: m[1]!.trim() });
    }
  }
  return examples;
}

function kindOf(node: ts.Declaration): ApiKind {
  if (ts.isFunctionDeclaration(node)) return 'function';
  if (ts.isClassDeclaration(node)) return 'class';
  if (ts.isInterfaceDeclaration(node)) return 'interface';
  if (ts.isTypeAliasDeclaration(node)) return 'type';
  if (ts.isEnumDeclaration(node)) return 'enum';
  if (ts.isModuleDeclaration(node)) return 'namespace';
  return 'variable';
}

/** The `@module` comment at the top of an entry file, without its tag and stars. */
function moduleDocOf(text: string): string {
  const match = /\/\*\*([\s\S]*?)\*\//.exec(text);
  if (!match?.[1]?.includes('@module')) return '';
  return match[1]
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .replace('@module', '')
    .trim();
}

const withoutModifiers = (node: ts.Node) =>
  ts.canHaveModifiers(node)
    ? (ts.getModifiers(node) ?? []).filter(
        (m) => m.kind !== ts.SyntaxKind.ExportKeyword && m.kind !== ts.SyntaxKind.AsyncKeyword,
      )
    : [];

const isHidden = (member: ts.Node) =>
  (ts.canHaveModifiers(member) &&
    (ts.getModifiers(member) ?? []).some(
      (m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword,
    )) ||
  ((ts.isPropertyDeclaration(member) || ts.isMethodDeclaration(member)) && ts.isPrivateIdentifier(member.name)) ||
  ts.getJSDocTags(member).some((tag) => tag.tagName.text === 'internal');

/** A declaration as a `.d.ts` shows it: no body, no initializer, no private member. */
function declarationText(
  node: ts.Declaration,
  name: string,
  checker: ts.TypeChecker,
  print: (node: ts.Node) => string,
): string {
  const f = ts.factory;
  const typeNode = (at: ts.Node) =>
    checker.typeToTypeNode(checker.getTypeAtLocation(at), undefined, ts.NodeBuilderFlags.NoTruncation) ??
    f.createKeywordTypeNode(ts.SyntaxKind.UnknownKeyword);
  if (ts.isFunctionDeclaration(node)) {
    const returnType =
      node.type ??
      checker.typeToTypeNode(
        checker.getReturnTypeOfSignature(checker.getSignatureFromDeclaration(node)!),
        undefined,
        ts.NodeBuilderFlags.NoTruncation,
      );
    return `${print(
      f.updateFunctionDeclaration(
        node,
        withoutModifiers(node),
        node.asteriskToken,
        node.name,
        node.typeParameters,
        node.parameters.map((p) => f.updateParameterDeclaration(p, p.modifiers, p.dotDotDotToken, p.name, p.questionToken ?? (p.initializer ? f.createToken(ts.SyntaxKind.QuestionToken) : undefined), p.type ?? typeNode(p), undefined)),
        returnType,
        undefined,
      ),
    ).replace(/;?$/, ';')}`;
  }
  if (ts.isVariableDeclaration(node)) {
    const type = node.type ? print(node.type) : checker.typeToString(checker.getTypeAtLocation(node), node, FORMAT);
    const isConst = (ts.getCombinedNodeFlags(node) & ts.NodeFlags.Const) !== 0;
    return `${isConst ? 'const' : 'let'} ${name}: ${type};`;
  }
  if (ts.isClassDeclaration(node)) {
    const members = node.members
      .filter((m) => !isHidden(m))
      .map((m) => {
        if (ts.isMethodDeclaration(m))
          return f.updateMethodDeclaration(m, withoutModifiers(m), m.asteriskToken, m.name, m.questionToken, m.typeParameters, m.parameters, m.type ?? typeNode(m), undefined);
        if (ts.isConstructorDeclaration(m))
          return f.updateConstructorDeclaration(m, withoutModifiers(m), m.parameters.map((p) => f.updateParameterDeclaration(p, undefined, p.dotDotDotToken, p.name, p.questionToken, p.type, undefined)), undefined);
        if (ts.isPropertyDeclaration(m))
          return f.updatePropertyDeclaration(m, withoutModifiers(m), m.name, m.questionToken, m.type ?? typeNode(m), undefined);
        return m;
      });
    return print(
      f.updateClassDeclaration(node, withoutModifiers(node), node.name, node.typeParameters, node.heritageClauses, members),
    );
  }
  return print(node);
}

function membersOf(
  declarations: ts.Declaration[],
  checker: ts.TypeChecker,
  print: (node: ts.Node, source: ts.SourceFile) => string,
): ApiMember[] {
  const members: ApiMember[] = [];
  for (const d of declarations) {
    if (!ts.isInterfaceDeclaration(d) && !ts.isClassDeclaration(d)) continue;
    for (const m of d.members) {
      if (isHidden(m) || !m.name) continue;
      const symbol = checker.getSymbolAtLocation(m.name);
      if (!symbol) continue;
      const doc = ts.displayPartsToString(symbol.getDocumentationComment(checker));
      const tags = symbol
        .getJsDocTags(checker)
        .map((tag) => ({ name: tag.name, text: ts.displayPartsToString(tag.text) }));
      const text = ts.isClassDeclaration(d)
        ? `${symbol.name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, m), m, FORMAT)}`
        : print(m, d.getSourceFile());
      members.push({ name: symbol.name, text, doc, tags });
    }
    if (ts.isInterfaceDeclaration(d) && d.heritageClauses) members.push(...inheritedMembers(d, members, checker, print));
  }
  return members;
}

/** The members an interface inherits (through `extends`, `Omit<…>` and the like), after its own. */
function inheritedMembers(
  d: ts.InterfaceDeclaration,
  own: ApiMember[],
  checker: ts.TypeChecker,
  print: (node: ts.Node, source: ts.SourceFile) => string,
): ApiMember[] {
  const symbol = checker.getSymbolAtLocation(d.name);
  if (!symbol) return [];
  const names = new Set(own.map((m) => m.name));
  const inherited: ApiMember[] = [];
  for (const property of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
    const declaration = property.declarations?.[0];
    if (names.has(property.name) || !declaration || (ts.canHaveModifiers(declaration) && isHidden(declaration)))
      continue;
    const owner = declaration.parent;
    const from = ts.isInterfaceDeclaration(owner) || ts.isClassDeclaration(owner) ? owner.name?.text : undefined;
    const text = ts.isPropertySignature(declaration)
      ? print(declaration, declaration.getSourceFile())
      : `${property.name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(property, d), d, FORMAT)}`;
    inherited.push({
      name: property.name,
      text,
      doc: ts.displayPartsToString(property.getDocumentationComment(checker)),
      tags: property.getJsDocTags(checker).map((tag) => ({ name: tag.name, text: ts.displayPartsToString(tag.text) })),
      ...(from ? { from } : {}),
    });
  }
  return inherited;
}

/** Types a declaration names that are declared in this package's src/ and exported by no entry. */
function leaksOf(node: ts.Node, checker: ts.TypeChecker, exported: Set<ts.Symbol>): string[] {
  const found: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) {
      // Only the signature is public: skip the body.
      n.typeParameters?.forEach(visit);
      n.parameters.forEach(visit);
      if (n.type) visit(n.type);
      return;
    }
    if ((ts.isVariableDeclaration(n) || ts.isPropertyDeclaration(n)) && n.initializer) {
      if (n.type) visit(n.type);
      return;
    }
    if (ts.isJSDoc(n) || (ts.canHaveModifiers(n) && n !== node && isHidden(n))) return;
    if (ts.isTypeReferenceNode(n) || ts.isExpressionWithTypeArguments(n) || ts.isTypeQueryNode(n)) {
      const at = ts.isTypeReferenceNode(n) ? n.typeName : ts.isTypeQueryNode(n) ? n.exprName : n.expression;
      let symbol = checker.getSymbolAtLocation(at);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      const declaration = symbol?.declarations?.[0];
      if (
        symbol &&
        declaration &&
        !(symbol.flags & ts.SymbolFlags.TypeParameter) &&
        !exported.has(symbol) &&
        !ts.isTypeParameterDeclaration(declaration)
      ) {
        const file = relative(ROOT, declaration.getSourceFile().fileName);
        if (file.startsWith('src/') && isTopLevel(declaration)) found.push(`${symbol.name} (${file})`);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}

const isTopLevel = (declaration: ts.Declaration) =>
  ts.isSourceFile(declaration.parent) ||
  (ts.isVariableDeclarationList(declaration.parent) && ts.isSourceFile(declaration.parent.parent.parent));
