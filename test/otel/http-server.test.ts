/**
 * Node's HTTP auto-instrumentation (`@opentelemetry/instrumentation-http`) around a real Express
 * server on 127.0.0.1: the delivery's `process` span is a child of the HTTP server span the
 * instrumentation made for the request, in the same trace, and the handler's span a child of it.
 */
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createMailReceiver } from '@svc/webhooks';
import { createOtelTelemetry } from '@svc/webhooks/otel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_SECRET, mailDelivery } from '../receivers/support.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let instrumentation: HttpInstrumentation;
let server: import('node:http').Server;
let url: string;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  // As `node --import ./tracing.mjs` does first in an app: the instrumentation patches `http` when it
  // is loaded, so it is enabled before the first require of it (Express's, and ours below).
  instrumentation = new HttpInstrumentation();
  instrumentation.setTracerProvider(provider);
  instrumentation.enable();
  const require = createRequire(import.meta.url);
  const http = require('node:http') as typeof import('node:http');
  const express = require('express') as typeof import('express');
  const { createExpressMiddleware } = await import('@svc/webhooks/express');
  const receiver = createMailReceiver({
    secret: MAIL_SECRET,
    logger: false,
    telemetry: createOtelTelemetry(),
  }).on('bounced', async () => {
    trace.getTracer('app').startSpan('suppress recipient').end();
  });
  const app = express();
  app.post('/webhooks/mail', createExpressMiddleware(receiver));
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/mail`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  instrumentation?.disable();
  trace.disable();
  context.disable();
});

const named = (spans: ReadableSpan[], name: string) => spans.find((span) => span.name === name);

describe('with instrumentation-http around Express', () => {
  it('the process span is a child of the HTTP server span of the request', async () => {
    const delivery = mailDelivery('bounced');
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(response.status).toBe(200);
    // The server span ends when the response is finished; give the exporter that turn.
    for (let i = 0; i < 50 && !exporter.getFinishedSpans().some((s) => s.kind === SpanKind.SERVER); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const spans = exporter.getFinishedSpans();
    const server = spans.find((span) => span.kind === SpanKind.SERVER);
    const process = named(spans, 'process bounced');
    const own = named(spans, 'suppress recipient');
    expect(server?.instrumentationScope.name).toBe('@opentelemetry/instrumentation-http');
    expect(server?.attributes['http.response.status_code'] ?? server?.attributes['http.status_code']).toBe(
      200,
    );
    expect(process?.parentSpanContext?.spanId).toBe(server!.spanContext().spanId);
    expect(process?.spanContext().traceId).toBe(server!.spanContext().traceId);
    expect(own?.parentSpanContext?.spanId).toBe(process!.spanContext().spanId);
  });
});
