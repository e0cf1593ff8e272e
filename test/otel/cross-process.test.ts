/**
 * One trace across the hand-off: a real Express receiver in this process writes BullMQ jobs (on a
 * real redis-server) inside its `send` span; a BullMQ worker in ANOTHER process (fixtures/
 * traced-worker.ts) exports its spans over OTLP/HTTP (JSON) to a receiver this test starts on
 * 127.0.0.1. The worker's `process` span is in the sender's trace, a child of the `send` span and
 * linked to it, and the handler's own span is inside it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createMailReceiver } from '@svc/webhooks';
import { createBullmqHandoff } from '@svc/webhooks/bullmq';
import { createExpressMiddleware } from '@svc/webhooks/express';
import { createOtelTelemetry } from '@svc/webhooks/otel';
import { Queue } from 'bullmq';
import express from 'express';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type RedisServer, redisAvailable, startRedis } from '../support/servers.js';

const root = new URL('../../', import.meta.url).pathname;

/** A span as OTLP/JSON carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
  links?: { traceId: string; spanId: string }[];
}

const exported: OtlpSpan[] = [];
let collector: Server;
let redis: RedisServer;
let connection: Redis;
let queue: Queue;
let worker: ChildProcess | undefined;
let app: Server;
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const queueName = `otel-${process.pid}`;

/** A tiny OTLP/HTTP trace receiver: POST /v1/traces with a JSON ExportTraceServiceRequest. */
function startCollector(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const request = JSON.parse(body) as {
        resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const resource of request.resourceSpans)
        for (const scope of resource.scopeSpans) exported.push(...scope.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function startWorker(otlpUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', `${root}test/otel/fixtures/traced-worker.ts`], {
    cwd: root,
    env: {
      ...process.env,
      REDIS_PORT: String(redis.port),
      QUEUE_NAME: queueName,
      MAIL_SECRET,
      OTLP_URL: otlpUrl,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`worker exited early (${code})`)));
  });
}

async function until<T>(value: () => T | undefined, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = value();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  if (!redisAvailable()) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  collector = await startCollector();
  redis = await startRedis();
  connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  queue = new Queue(queueName, { connection });
  const receiver = createMailReceiver({
    secret: MAIL_SECRET,
    handoff: createBullmqHandoff({ queue }),
    telemetry: createOtelTelemetry({ tracerProvider: provider }),
  });
  const web = express();
  // The HTTP server span an auto-instrumentation would make (test/otel/http-server.test.ts has the real one).
  web.use((req, res, next) => {
    provider
      .getTracer('http')
      .startActiveSpan(`${req.method} ${req.path}`, { kind: SpanKind.SERVER }, (span) => {
        res.on('finish', () => span.end());
        next();
      });
  });
  web.post('/webhooks/mail', createExpressMiddleware(receiver));
  app = createServer(web);
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  const { port } = collector.address() as AddressInfo;
  worker = await startWorker(`http://127.0.0.1:${port}/v1/traces`);
}, 120_000);

afterAll(async () => {
  worker?.kill('SIGKILL');
  app?.closeAllConnections();
  app?.close();
  collector?.close();
  await queue?.close();
  connection?.disconnect();
  await redis?.close();
  context.disable();
});

describe.runIf(redisAvailable())('a handed-off delivery traced across processes', () => {
  it('the worker’s process span continues the receiver’s trace: child of the send span, linked to it', {
    timeout: 60_000,
  }, async () => {
    const delivery = mailDelivery('bounced');
    const { port } = app.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/webhooks/mail`, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(await response.json()).toEqual({ ok: true, result: 'queued' });
    const send = await until(
      () => exporter.getFinishedSpans().find((span) => span.name === 'send bounced'),
      'the send span',
    );
    const http = exporter.getFinishedSpans().find((span) => span.name === 'POST /webhooks/mail');
    expect(send.parentSpanContext?.spanId).toBe(http?.spanContext().spanId);
    const { traceId, spanId } = send.spanContext();

    const process = await until(
      () => exported.find((span) => span.name === 'process bounced'),
      'the worker’s process span over OTLP',
    );
    const own = await until(
      () => exported.find((span) => span.name === 'suppress recipient'),
      'the handler’s span over OTLP',
    );
    expect(process.traceId).toBe(traceId);
    expect(process.parentSpanId).toBe(spanId);
    expect(process.links?.map((link) => [link.traceId, link.spanId])).toEqual([[traceId, spanId]]);
    expect(process.kind).toBe(5); // OTLP SPAN_KIND_CONSUMER
    const attributes = Object.fromEntries(
      (process.attributes ?? []).map(({ key, value }) => [key, value.stringValue ?? Number(value.intValue)]),
    );
    expect(attributes).toMatchObject({
      'messaging.system': 'mail',
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'bounced',
      'messaging.message.id': delivery.deliveryId,
      'svc_webhooks.verdict': 'handled',
      'svc_webhooks.attempt': 1,
    });
    expect(own.traceId).toBe(traceId);
    expect(own.parentSpanId).toBe(process.spanId);
  });
});
