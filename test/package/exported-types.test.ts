/**
 * Every type a public signature uses is exported, so a user can name it (a `declaration: true` build,
 * an options object built before the call, a wrapper of a driver). From each entry's exports the
 * check walks the signatures as a `.d.ts` shows them: written types (type references, `extends`,
 * `typeof`) and, where a signature leaves a type to inference, the type the compiler infers; then,
 * transitively, the declarations those names lead to. Every named type declared under src/ that it
 * reaches must be exported by an entry: the one whose signature uses it, or one the user imports it
 * from already (an adapter's signature naming the root's `WebhookError`).
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { root } from './dist.js';

/** `entry: Name (src/file.ts)` for every named type an entry's exports reach that the entry does not export. */
function unexportedTypes(): string[] {
  const entries = Object.entries(
    JSON.parse(readFileSync(join(root, 'entries.json'), 'utf8')) as Record<string, string>,
  );
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, root).options;
  const program = ts.createProgram(
    entries.map(([, file]) => join(root, file)),
    { ...options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const resolve = (symbol: ts.Symbol) =>
    symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const ownFile = (node: ts.Node) => relative(root, node.getSourceFile().fileName);
  const isOwn = (node: ts.Node) => ownFile(node).startsWith('src/');
  const isTopLevel = (d: ts.Declaration) =>
    ts.isSourceFile(d.parent) ||
    (ts.isVariableDeclarationList(d.parent) && ts.isSourceFile(d.parent.parent.parent));
  const isHidden = (member: ts.Node) =>
    (ts.canHaveModifiers(member) &&
      (ts.getModifiers(member) ?? []).some(
        (m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword,
      )) ||
    (('name' in member && member.name && ts.isPrivateIdentifier(member.name as ts.Node)) as boolean);

  const modules = entries.map(([subpath, file]) => {
    const source = program.getSourceFile(join(root, file));
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`exported-types: ${file} (entries.json) is missing`);
    return [subpath, checker.getExportsOfModule(module).map(resolve)] as const;
  });
  // A name is importable when some entry exports it (an adapter's signature naming the root's
  // `WebhookError` is fine: the user imports it from `@svc/webhooks`).
  const importable = new Set(modules.flatMap(([, symbols]) => symbols));

  const problems: string[] = [];
  for (const [subpath, symbols] of modules) {
    const exported = new Set(symbols);
    const seenSymbols = new Set<ts.Symbol>();
    const seenTypes = new Set<ts.Type>();
    const missing = new Set<string>();

    /** A named symbol a signature reaches: report it when this entry does not export it, then walk it. */
    const reach = (found: ts.Symbol | undefined) => {
      if (!found) return;
      const symbol = resolve(found);
      if (seenSymbols.has(symbol) || symbol.flags & ts.SymbolFlags.TypeParameter) return;
      seenSymbols.add(symbol);
      const declarations = (symbol.declarations ?? []).filter(isOwn);
      const first = declarations[0];
      if (!first) return; // a library's or the platform's type: not ours to export
      if (isTopLevel(first) && !importable.has(symbol)) missing.add(`${symbol.name} (${ownFile(first)})`);
      for (const d of declarations) visitNode(d);
    };

    /** A type the compiler inferred (no written annotation): its named parts, or its structure. */
    const visitType = (type: ts.Type) => {
      if (seenTypes.has(type)) return;
      seenTypes.add(type);
      if (type.aliasSymbol) {
        reach(type.aliasSymbol);
        type.aliasTypeArguments?.forEach(visitType);
        return;
      }
      if (type.isUnionOrIntersection()) {
        type.types.forEach(visitType);
        return;
      }
      const symbol = type.getSymbol();
      const named =
        symbol && symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class | ts.SymbolFlags.Enum);
      if (named) {
        reach(symbol);
        if (
          type.flags & ts.TypeFlags.Object &&
          (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference
        )
          checker.getTypeArguments(type as ts.TypeReference).forEach(visitType);
        return;
      }
      if (!(type.flags & ts.TypeFlags.Object)) return;
      if (symbol?.declarations?.some((d) => !isOwn(d))) {
        // A library's generic (Promise<T>, Map<K, V>, …): only its arguments can be ours.
        if ((type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference)
          checker.getTypeArguments(type as ts.TypeReference).forEach(visitType);
        return;
      }
      for (const property of type.getProperties()) {
        const d = property.valueDeclaration ?? property.declarations?.[0];
        if (d && isHidden(d)) continue;
        if (d && isOwn(d) && (d as { type?: ts.Node }).type) visitNode(d);
        else visitType(checker.getTypeOfSymbol(property));
      }
      for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()])
        visitSignature(signature);
      for (const info of checker.getIndexInfosOfType(type)) visitType(info.type);
    };

    const visitSignature = (signature: ts.Signature) => {
      const d = signature.getDeclaration() as ts.SignatureDeclaration | undefined;
      if (d && isOwn(d)) {
        visitNode(d);
        return;
      }
      for (const parameter of signature.getParameters()) visitType(checker.getTypeOfSymbol(parameter));
      visitType(signature.getReturnType());
    };

    /** A declaration as its `.d.ts` shows it: names written in it, inferred types where nothing is written. */
    const visitNode = (n: ts.Node): void => {
      if (ts.isJSDoc(n) || isHidden(n)) return;
      if (ts.isFunctionLike(n)) {
        n.typeParameters?.forEach(visitNode);
        n.parameters.forEach(visitNode);
        if (n.type) visitNode(n.type);
        else if (!ts.isConstructorDeclaration(n) && !ts.isSetAccessorDeclaration(n)) {
          const signature = checker.getSignatureFromDeclaration(n);
          if (signature) visitType(signature.getReturnType());
        }
        return;
      }
      if (ts.isVariableDeclaration(n) || ts.isPropertyDeclaration(n) || ts.isParameter(n)) {
        if (n.type) visitNode(n.type);
        else visitType(checker.getTypeAtLocation(n.name));
        return;
      }
      if (ts.isExportAssignment(n)) {
        visitType(checker.getTypeAtLocation(n.expression));
        return;
      }
      if (ts.isTypeReferenceNode(n)) reach(checker.getSymbolAtLocation(n.typeName));
      else if (ts.isExpressionWithTypeArguments(n)) reach(checker.getSymbolAtLocation(n.expression));
      else if (ts.isTypeQueryNode(n)) reach(checker.getSymbolAtLocation(n.exprName));
      ts.forEachChild(n, visitNode);
    };

    for (const symbol of exported) {
      seenSymbols.add(symbol);
      for (const d of symbol.declarations ?? []) visitNode(d);
    }
    problems.push(...[...missing].sort().map((name) => `${subpath}: ${name}`));
  }
  return problems;
}

describe('the types of the public signatures', () => {
  it('every named type an entry signature reaches is exported by the entry', () => {
    expect(unexportedTypes()).toEqual([]);
  }, 120_000);
});
