/**
 * The layer rule of src/ (docs/architecture.md): a folder imports only folders on lower floors, never
 * one beside it or above it, and no module imports itself back through others (no cycle), type
 * imports included.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../src/', import.meta.url));

/** The floor of each top-level folder (or root file) of src/; a layer imports strictly lower floors. */
const FLOORS: Record<string, number> = {
  shared: 0,
  verify: 1,
  dedup: 2,
  core: 3,
  // The hand-off job (codec, MAC, enqueue, runJob): one floor above the pipeline, loaded by the
  // receiver only when it hands off (a dynamic import) and by the queue engines.
  'handoff/job': 3.5,
  receiver: 4,
  mail: 5,
  crm: 5,
  // Both services' JSON Schemas, converted from their zod schemas (`./schemas`, the CLI's `schemas`).
  'json-schemas': 5.5,
  adapters: 6,
  handoff: 6,
  // The database inbox: a hand-off engine whose queue is the app's own table (docs/inbox.md).
  inbox: 6.5,
  manage: 6,
  otel: 6,
  index: 7,
  // Entries that join a store and the inbox kept beside it in the same database.
  postgres: 7,
  sqlite: 7,
  schemas: 7,
  testing: 7,
  cli: 8,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.[^"']+)["']/g;

/** The src-relative files `file` imports (relative specifiers only; `.js` maps to the `.ts` source). */
function importsOf(file: string): string[] {
  // Comments may show imports in examples; they are not imports.
  const code = readFileSync(join(root, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  return [...code.matchAll(IMPORT)].map((match) =>
    normalize(join(dirname(file), match[1]!)).replace(/\.js$/, '.ts'),
  );
}

function layerOf(file: string): string {
  const [first, second] = file.split(sep);
  if (first === 'handoff' && second === 'job') return 'handoff/job';
  return first!.replace(/\.ts$/, '');
}

const files = sourceFiles(root);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe('src/ layers', () => {
  it('every folder has a floor', () => {
    const layers = [...new Set(files.map(layerOf))].sort();
    expect(layers.filter((layer) => FLOORS[layer] === undefined)).toEqual([]);
  });

  it('imports only go down: no import of a layer beside or above', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      const from = layerOf(file);
      for (const target of imports) {
        const to = layerOf(target);
        if (to !== from && FLOORS[to]! >= FLOORS[from]!) upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('every relative import names a file that exists', () => {
    const known = new Set(files);
    const missing = [...graph].flatMap(([file, imports]) =>
      imports.filter((target) => !known.has(target)).map((target) => `${file} -> ${target}`),
    );
    expect(missing).toEqual([]);
  });

  it('has no import cycle', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('the pipeline (src/core) is one plain async path: one value-or-promise fork (delivery/run.ts), no store side channel, no service named', () => {
    const found: string[] = [];
    for (const file of files.filter((f) => layerOf(f) === 'core')) {
      const code = readFileSync(join(root, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/\/\/.*$/gm, '');
      // The one deliberate fork: a memory store's synchronous core and handlers that returned no
      // promise settle inline (docs/architecture.md); nothing else in core reads that core.
      const fork = file === join('core', 'delivery', 'run.ts') ? [] : [/instanceof Promise/, /inlineStore/];
      for (const pattern of [
        ...fork,
        /isThenable/,
        /Awaitable/,
        /syncStoreOps|withSyncOps/,
        /['"`](mail|crm)['"`:]/,
      ]) {
        if (pattern.test(code)) found.push(`${file}: ${pattern.source}`);
      }
    }
    expect(found).toEqual([]);
  });

  // docs/architecture.md's checkable claims.
  const codeOf = (file: string) =>
    readFileSync(join(root, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');

  it('the pipeline knows no HTTP status: no status table, no HTTP answer, no status number in src/core', () => {
    const found: string[] = [];
    for (const file of files.filter((f) => layerOf(f) === 'core')) {
      const code = codeOf(file);
      for (const pattern of [/WEBHOOK_ERROR_STATUS/, /http-answer/, /\bstatus\s*(?:[:<>]|[!=]==?)\s*\d/])
        if (pattern.test(code)) found.push(`${file}: ${pattern.source}`);
      for (const target of graph.get(file) ?? [])
        if (target.startsWith(`receiver${sep}`)) found.push(`${file} -> ${target}`);
    }
    expect(found).toEqual([]);
  });

  it('one scheduler per receiver: made only by the delivery settings, which a receiver builds once', () => {
    const makers = files.filter((f) => /\bcreateScheduler\(|new Scheduler\(/.test(codeOf(f)));
    expect(makers.sort()).toEqual(
      [
        join('adapters', 'node', 'read-body.ts'),
        join('core', 'delivery', 'settings.ts'),
        join('core', 'request-timers.ts'),
      ].sort(),
    );
    const builders = files.filter((f) => /\bdeliverySettings\(/.test(codeOf(f)));
    expect(builders.sort()).toEqual(
      [join('core', 'delivery', 'settings.ts'), join('receiver', 'create-receiver.ts')].sort(),
    );
    expect(codeOf(join('receiver', 'create-receiver.ts')).match(/\bdeliverySettings\(/g)).toHaveLength(1);
  });

  it('only the HTTP answer reads the status table: no module but errors.ts and receiver/http-answer.ts names WEBHOOK_ERROR_STATUS', () => {
    const readers = files.filter((f) =>
      /\bWEBHOOK_ERROR_STATUS\b/.test(
        codeOf(f).replace(/export\s*(?:type\s*)?\{[^}]*\}\s*from\s*["'][^"']+["'];?/g, ''),
      ),
    );
    expect(readers.sort()).toEqual([join('receiver', 'http-answer.ts'), join('shared', 'errors.ts')].sort());
  });

  it('OpenTelemetry stays in its entry: only src/otel imports @opentelemetry/api', () => {
    const importers = files.filter((f) => /["']@opentelemetry\/api["']/.test(codeOf(f)));
    expect(importers.length).toBeGreaterThan(0);
    expect(importers.filter((f) => f.split(sep)[0] !== 'otel')).toEqual([]);
  });

  it('a worker translates a verdict once: every queue engine runs through the one worker loop, the inbox reaches jobAction, nothing else re-derives refused', () => {
    const engines = ['bullmq', 'pg-boss', 'cloudflare-queues', 'sqs', 'nats'].map((e) => join('handoff', e));
    const inside = (dir: string) => files.filter((f) => f.startsWith(`${dir}${sep}`));
    const reaches = (dir: string, call: RegExp) => inside(dir).some((f) => call.test(codeOf(f)));
    // The engines supply their parts (fetch, settle, extend) to the loop (worker-loop.ts) or, with no
    // loop of their own (a Queues batch, a Lambda batch), to its core (run-and-settle.ts).
    expect(engines.filter((dir) => !reaches(dir, /\bcreateWorkerLoop(?:<\w+>)?\(|\brunAndSettle\(/))).toEqual(
      [],
    );
    expect(engines.filter((dir) => reaches(dir, /\bjobAction\(|\bjobActionOfError\(/))).toEqual([]);
    expect(reaches('inbox', /\bjobAction\(|\brunAndSettle\(|\bcreateWorkerLoop\(/)).toBe(true);
    // The core is itself one jobAction call.
    expect(codeOf(join('handoff', 'run-and-settle.ts')).match(/\bjobAction\(/g)).toHaveLength(1);
  });

  it('one name per concept: one Clock interface (VirtualClock is the Clock a test moves), one ErrorInfo, no second dedup key field', () => {
    const declared = (pattern: RegExp) =>
      files.flatMap((f) => [...codeOf(f).matchAll(pattern)].map((m) => `${f}:${m[1]}`));
    expect(
      declared(/^\s*(?:export\s+)?(?:interface|type)\s+(\w*Clock)\b\s*(?:[<={]|extends)/gm).sort(),
    ).toEqual(
      [
        `${join('shared', 'clock.ts')}:Clock`,
        `${join('testing', 'clock', 'virtual-clock.ts')}:VirtualClock`,
      ].sort(),
    );
    expect(
      declared(
        /^\s*(?:export\s+)?(?:interface|type)\s+(\w*(?:ErrorFacts|ErrorDetails|ErrorContext|TimerId))\b/gm,
      ),
    ).toEqual([]);
    // The delivery's dedup key is `dedupKey` wherever the pipeline carries it (the stores' own
    // parameter stays `key`: a store keys any string).
    const carriers = [
      join('core', 'receive-path.ts'),
      join('core', 'delivery', 'run.ts'),
      join('core', 'delivery', 'context.ts'),
    ];
    expect(
      carriers.filter((f) => /^\s*(?:readonly\s+|declare\s+readonly\s+)?key\??:/m.test(codeOf(f))),
    ).toEqual([]);
  });

  it('the Node adapter is one translation: handle-request.ts holds the input, the reader choice and the answer; the stream reader needs nothing from core', () => {
    const node = files.filter((f) => f.startsWith(`${join('adapters', 'node')}${sep}`)).sort();
    expect(node).toEqual(
      ['disconnect-signal.ts', 'handle-request.ts', 'index.ts', 'linger.ts', 'listener.ts', 'read-body.ts']
        .map((name) => join('adapters', 'node', name))
        .sort(),
    );
    const reader = join('adapters', 'node', 'read-body.ts');
    expect((graph.get(reader) ?? []).filter((target) => layerOf(target) === 'core')).toEqual([]);
    // The Express adapter opens one file of the Node adapter.
    const express = join('adapters', 'express.ts');
    expect(
      (graph.get(express) ?? []).filter((t) => t.startsWith(`${join('adapters', 'node')}${sep}`)),
    ).toEqual([join('adapters', 'node', 'handle-request.ts')]);
  });

  it('the body errors have one home beside WebhookError: only shared/body-errors.ts builds body_too_large and body_timeout', () => {
    const builders = files.filter((f) =>
      /\bfunction\s+(?:bodyTooLarge|bodyTimeout)\b|\bDEFAULT_BODY_TIMEOUT_MS\s*=/.test(codeOf(f)),
    );
    expect(builders).toEqual([join('shared', 'body-errors.ts')]);
  });

  it('the hand-off job loads only in apps that hand off: nothing below the queue engines imports it statically', () => {
    const staticImport = /\bfrom\s*["'](\.[^"']*handoff\/job\/[^"']+)["']/g;
    const found = files
      .filter((f) => ['core', 'receiver', 'mail', 'crm', 'index'].includes(layerOf(f)))
      .flatMap((f) =>
        [
          ...codeOf(f)
            .replace(/(?:import|export) type[^;]+;/g, '')
            .matchAll(staticImport),
        ]
          .map((m) => m[1]!)
          .filter((target) => !target.endsWith('check-target.js'))
          .map((target) => `${f} -> ${target}`),
      );
    expect(found).toEqual([]);
  });
});
