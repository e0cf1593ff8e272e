#!/usr/bin/env node
// The public surface: the names every entry exports, counted with the TypeScript compiler as an
// editor shows them to a user. `node scripts/surface.mjs` checks the built `dist/*.d.ts` (CI, after
// the build); test/package/surface.test.ts checks the same limits over the source entries.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../', import.meta.url));

/**
 * The limits of the issue that cut the surface before the first publish, raised for the types a
 * public signature reaches (a user's `declaration: true` build must name every one of them:
 * .ci/consumer/types/inferred.ts) and for the entries added since: `./handoff` (the hand-off
 * contract for engines of your own), `./sqs`, `./nats` and the inbox of `./postgres` and `./sqlite`
 * (+4: postgresJsTransactions, the inbox's postgres.js transaction adapter; inboxContract with its
 * InboxContractOptions and InboxContractEffects, the inbox's contract in ./testing).
 * +8: the inbox's direct mode and depth (`createDirectInbox`, `DirectInboxOptions`, `InboxStats` in
 * `./postgres` and `./sqlite`; `createInboxMetrics`, `InboxMetricsOptions` in `./otel`).
 * +72 (12 of them root types): the types public signatures named that no entry exported, each now
 * exported by the entry whose signature uses it (test/package/exported-types.test.ts).
 * +3: `tx(context)` typed per transaction adapter (`DirectInbox` in `./postgres` and `./sqlite`, the
 * type of `createDirectInbox`'s result; `PgPoolClientOf` in `./postgres`, the client of
 * `pgTransactions(pool)`).
 * +3: `Clock`, `KnownFields` and `CrmEnvelopeOf` also from `./testing`, whose factories' results name
 * them: a `declaration: true` module importing `./testing` alone must print them from there
 * (.ci/consumer/types/testing-only.ts).
 * +9: setup in one call and the ORMs' transaction adapters: `ensureNatsStreams`, `NatsStreamsOptions`
 * (`./nats`), `ensureSqsQueues`, `SqsQueuesOptions` (`./sqs`), `EnsuredResource` in both (their
 * results name it), `drizzleTransactions`, `kyselyTransactions` (`./postgres`, their parameter types
 * written out in the signatures rather than named), `drizzleSqliteTransactions` (`./sqlite`).
 * +6: reconciliation in `./manage`: `createReconciler` and its `ReconcilerOptions`, the
 * `ReconcileReport` (and its `ReconcileItem`) that `onReport` hands over, the `DeliveryHolder` port an
 * app implements for a store of its own, `createStoreHolder` for a dedup store (its options, counts
 * and outcomes are inline types, not names).
 * +3: `jsonSchemas()` of `./schemas`, the JSON Schemas `svc-webhooks schemas` prints, for a program
 * that wants them without the command, with `WebhookJsonSchemas` and `JsonSchema` (its result names them).
 * +2 (root types): `MailRepairs` and `CrmRepairs`, the types of the receivers' `repair` option (a
 * module that keeps its repairs apart from the receiver names them; docs/inbox.md "When the payload changes").
 */
export const LIMITS = { rootValues: 30, rootTypes: 74, total: 400 };

/** Subpath -> file: the built `.d.ts` under `dist`, or the source entries when `dist` is omitted. */
export function entryFiles(dist) {
  const entries = JSON.parse(readFileSync(join(root, 'entries.json'), 'utf8'));
  return Object.entries(entries).map(([subpath, source]) => [
    subpath,
    dist ? join(dist, `${subpath === '.' ? 'index' : subpath.replaceAll('/', '-')}.d.ts`) : join(root, source),
  ]);
}

/** Subpath -> { values, types } exported by each file. */
export function surfaceOf(files) {
  const program = ts.createProgram(
    files.map(([, file]) => file),
    {
      noEmit: true,
      skipLibCheck: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      allowImportingTsExtensions: true,
    },
  );
  const checker = program.getTypeChecker();
  return new Map(
    files.map(([subpath, file]) => {
      const source = program.getSourceFile(file);
      if (!source) throw new Error(`surface: ${file} is missing`);
      const module = checker.getSymbolAtLocation(source);
      const surface = { values: [], types: [] };
      for (const symbol of module ? checker.getExportsOfModule(module) : []) {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        (target.flags & ts.SymbolFlags.Value ? surface.values : surface.types).push(symbol.name);
      }
      return [subpath, surface];
    }),
  );
}

/** The problems of `surfaces` against {@link LIMITS}, as sentences; empty when within them. */
export function overLimits(surfaces) {
  const problems = [];
  const top = surfaces.get('.');
  if (top.values.length > LIMITS.rootValues) problems.push(`root entry: ${top.values.length} values (limit ${LIMITS.rootValues})`);
  if (top.types.length > LIMITS.rootTypes) problems.push(`root entry: ${top.types.length} types (limit ${LIMITS.rootTypes})`);
  const total = [...surfaces.values()].reduce((sum, s) => sum + s.values.length + s.types.length, 0);
  if (total > LIMITS.total) problems.push(`all entries: ${total} names (limit ${LIMITS.total})`);
  return problems;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const surfaces = surfaceOf(entryFiles(join(root, 'dist')));
  let total = 0;
  for (const [subpath, { values, types }] of surfaces) {
    total += values.length + types.length;
    console.log(`${subpath.padEnd(12)} ${String(values.length).padStart(3)} values ${String(types.length).padStart(3)} types`);
  }
  console.log(`${'total'.padEnd(12)} ${total} names`);
  const problems = overLimits(surfaces);
  for (const problem of problems) console.error(`over the limit: ${problem}`);
  process.exit(problems.length ? 1 : 0);
}
