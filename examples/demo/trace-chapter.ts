/**
 * The demo's chapter 9 (also alone: `npm run demo -- --trace`): one email delivery handed off to a
 * BullMQ worker, traced with the OpenTelemetry SDK as an app sets it up (a tracer provider, the
 * AsyncLocalStorage context manager, Node's HTTP auto-instrumentation) and `createOtelTelemetry()`
 * on the receiver. The spans go to an in-memory exporter; the chapter prints the delivery's trace
 * tree: the HTTP server span, the receiver's `send` span, the worker's `process` span (a child of
 * `send` through the job's traceparent, and linked to it) and the handler's own span.
 */
import { createRequire } from 'node:module';
import { context, type SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createOtelTelemetry } from '@svc/webhooks/otel';
import { createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import { startHandoffDemoReceiver } from './handoff-receiver.js';

/** One span of the printed tree. */
export interface TracedSpan {
  name: string;
  kind: 'INTERNAL' | 'SERVER' | 'CLIENT' | 'PRODUCER' | 'CONSUMER';
  /** The parent's name; null for the root. */
  parent: string | null;
  /** Names of the spans it links to. */
  links: string[];
  durationMs: number;
}

const KINDS: Record<SpanKind, TracedSpan['kind']> = {
  0: 'INTERNAL',
  1: 'SERVER',
  2: 'CLIENT',
  3: 'PRODUCER',
  4: 'CONSUMER',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ms = ({ duration: [s, ns] }: ReadableSpan) => s * 1_000 + ns / 1e6;

/** Plays the chapter; resolves with the trace's spans, or why it was skipped (no redis-server). */
export async function traceChapter(
  print: (line: string) => void,
): Promise<TracedSpan[] | { skipped: string }> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  // As `node --import ./tracing.mjs` would do before the app: patch `http` for incoming requests.
  const http = new HttpInstrumentation();
  http.enable();
  createRequire(import.meta.url)('node:http');

  const clock = createVirtualClock({ start: Date.parse('2025-06-02T09:30:00.000Z') });
  const mail = createMailEmitter({ clock, seed: 'demo-trace', allowPrivateNetworks: true });
  const hook = mail.createWebhook({ url: 'http://127.0.0.1:1/webhooks/mail', events: ['clicked'] });
  let handled: string | undefined;
  const receiver = await startHandoffDemoReceiver({
    mailSecret: hook.secret,
    telemetry: createOtelTelemetry(),
    // The handler's own work, in a span of the app's tracer: it nests under the worker's span.
    onHandled: (_name, deliveryId) =>
      trace.getTracer('demo-app').startActiveSpan('update click stats', async (span) => {
        await sleep(5);
        span.end();
        handled = deliveryId;
      }),
  });
  try {
    if ('skipped' in receiver) return receiver;
    mail.updateWebhook(hook.id, { url: `${receiver.url}/webhooks/mail` });
    const [delivery] = await mail.emit('clicked');
    for (let waited = 0; handled !== delivery!.id && waited < 15_000; waited += 10) await sleep(10);
    const send = exporter.getFinishedSpans().find((span) => span.name === 'send clicked');
    if (!send) throw new Error('no send span');
    const { traceId } = send.spanContext();
    const inTrace = () =>
      exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
    // The worker's span ends once its handler settled and the claim completed.
    for (let waited = 0; !inTrace().some((s) => s.name === 'process clicked') && waited < 5_000; waited += 10)
      await sleep(10);
    // Each span after its parent (depth first), siblings by start: spans started within the same
    // millisecond on two clocks (a span given its start, its child timed by the SDK) may record a
    // child's start first, so start time alone does not order a parent before its child.
    const found = inTrace();
    const byId = new Map(found.map((span) => [span.spanContext().spanId, span]));
    const byStart = (a: ReadableSpan, b: ReadableSpan) =>
      a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1];
    const childrenOf = (parent: ReadableSpan | undefined) =>
      found.filter((span) => byId.get(span.parentSpanContext?.spanId ?? '') === parent).sort(byStart);
    const spans: ReadableSpan[] = [];
    const visit = (span: ReadableSpan): void => {
      spans.push(span);
      for (const child of childrenOf(span)) visit(child);
    };
    for (const root of childrenOf(undefined)) visit(root);
    const tree: TracedSpan[] = spans.map((span) => ({
      name: span.name,
      kind: KINDS[span.kind],
      parent: byId.get(span.parentSpanContext?.spanId ?? '')?.name ?? null,
      links: span.links.map((link) => byId.get(link.context.spanId)?.name ?? link.context.spanId),
      durationMs: ms(span),
    }));
    print(`            trace ${traceId}: ${spans.length} spans, parent links as recorded by the SDK`);
    const depth = (span: ReadableSpan): number => {
      const parent = byId.get(span.parentSpanContext?.spanId ?? '');
      return parent ? depth(parent) + 1 : 0;
    };
    spans.forEach((span, i) => {
      const level = depth(span);
      const label = `${level === 0 ? '' : `${'   '.repeat(level - 1)}└─ `}${span.name}`;
      const verdict = span.attributes['svc_webhooks.verdict'];
      const facts = [
        verdict === undefined ? '' : `verdict ${String(verdict)}`,
        ...tree[i]!.links.map((name) => `linked to ${name}`),
      ].filter(Boolean);
      print(
        `            ${label.padEnd(34)} ${tree[i]!.kind.padEnd(8)} ${tree[i]!.durationMs.toFixed(1).padStart(7)} ms${facts.length ? `  ${facts.join(', ')}` : ''}`,
      );
    });
    return tree;
  } finally {
    if (!('skipped' in receiver)) await receiver.close();
    http.disable();
    trace.disable();
    context.disable();
  }
}
