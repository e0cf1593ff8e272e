import 'reflect-metadata';
import { type AddressInfo, connect } from 'node:net';
import { Controller, Injectable, Module, Post, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { WebhookReceiverLike } from '@svc/webhooks';
import { createNestBodyReader, createNestHandler } from '@svc/webhooks/nest';
import type { Request, Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceTarget, conformance } from './conformance.js';
import { mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { PATHS } from './support/servers.js';
import { slowClientSuite, slowLoris, waitingReceiver } from './support/slow-clients.js';

const LIMIT = 64 * 1024;

// The app of docs/adapters-nest.md: the receivers are a provider, the controller hands each
// route's request and response to createNestHandler. Real decorators (tsconfig: experimentalDecorators,
// emitDecoratorMetadata, as Nest projects set them); the controller gets WebhookReceivers by its type.
@Injectable()
class WebhookReceivers {
  constructor(
    readonly mail: WebhookReceiverLike,
    readonly crm: WebhookReceiverLike,
  ) {}
}

@Controller('webhooks')
class WebhooksController {
  private readonly handleMail;
  private readonly handleCrm;

  constructor(receivers: WebhookReceivers) {
    this.handleMail = createNestHandler(receivers.mail);
    this.handleCrm = createNestHandler(receivers.crm);
  }

  @Post('mail')
  mail(@Req() req: Request, @Res() res: Response) {
    return this.handleMail(req, res);
  }

  @Post('crm')
  crm(@Req() req: Request, @Res() res: Response) {
    return this.handleCrm(req, res);
  }
}

type Options = { rawBody?: boolean; bodyParser?: boolean; bodyReader?: boolean };

/** Nest on platform-express, listening on 127.0.0.1, port 0. */
async function startNest(
  receivers: { mail: WebhookReceiverLike; crm: WebhookReceiverLike },
  options: Options,
) {
  @Module({
    controllers: [WebhooksController],
    providers: [{ provide: WebhookReceivers, useValue: new WebhookReceivers(receivers.mail, receivers.crm) }],
  })
  class AppModule {}
  const { bodyReader, ...nestOptions } = options;
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { logger: false, ...nestOptions });
  if (bodyReader) {
    // As docs/adapters-nest.md says: ahead of Nest's parsers, the webhook bodies within the receivers' limits.
    app.use(PATHS.mail, createNestBodyReader(receivers.mail));
    app.use(PATHS.crm, createNestBodyReader(receivers.crm));
  }
  // As docs/adapters-nest.md says: Nest's JSON parser limit (100 kB by default) at the receiver's.
  // biome-ignore lint/correctness/useHookAtTopLevel: Nest's method, not a React hook.
  if (options.rawBody) app.useBodyParser('json', { limit: LIMIT });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, close: () => app.close() };
}

for (const options of [
  { rawBody: true },
  { rawBody: true, bodyReader: true },
  { bodyParser: false },
] satisfies Options[]) {
  describe(`NestJS 12 (platform-express) with ${JSON.stringify(options)}`, () => {
    let target: ConformanceTarget;
    beforeAll(async () => {
      const receivers = createTestReceivers({ maxBodyBytes: LIMIT });
      target = { ...(await startNest(receivers, options)), paths: PATHS, handled: receivers.handled };
    });
    afterAll(() => target.close());
    // With rawBody, Nest's JSON parser reads the body first (its own 400 for bad JSON, 413 past its limit).
    conformance(() => target, {
      maxBodyBytes: LIMIT,
      parserInFront: options.rawBody && !('bodyReader' in options) ? 'json' : undefined,
    });
  });
}

describe('NestJS without rawBody', () => {
  let target: ConformanceTarget;
  let receivers: ReturnType<typeof createTestReceivers>;
  beforeAll(async () => {
    receivers = createTestReceivers({ maxBodyBytes: LIMIT });
    target = { ...(await startNest(receivers, {})), paths: PATHS, handled: receivers.handled };
  });
  afterAll(() => target.close());

  it('answers 500 raw_body_unavailable, logs the fix (rawBody: true) once, runs no handler', async () => {
    const delivery = mailDelivery();
    const response = await fetch(`${target.baseUrl}${PATHS.mail}`, {
      method: 'POST',
      body: delivery.body,
      headers: delivery.headers,
    });
    expect(response.status).toBe(500);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('raw_body_unavailable');
    expect(error.message).not.toContain('rawBody');
    const logged = receivers.logs.filter((entry) => JSON.stringify(entry).includes('raw_body_unavailable'));
    expect(logged).toHaveLength(1);
    expect(String(logged[0]?.fields.err)).toContain('NestFactory.create(AppModule, { rawBody: true })');
    expect(target.handled(delivery.deliveryId)).toBe(0);
  });

  it("reads the stream when Nest's parsers skipped the request (other content type)", async () => {
    const delivery = mailDelivery();
    const response = await fetch(`${target.baseUrl}${PATHS.mail}`, {
      method: 'POST',
      body: delivery.body,
      headers: { ...delivery.headers, 'content-type': 'application/octet-stream' },
    });
    expect(response.status).toBe(200);
    expect(target.handled(delivery.deliveryId)).toBe(1);
  });
});

describe('NestJS with bodyParser: false', () => {
  slowClientSuite(async (receiver) => ({
    ...(await startNest({ mail: receiver, crm: receiver }, { bodyParser: false })),
    path: PATHS.mail,
  }));
});

describe("NestJS with rawBody: true and createNestBodyReader (the documented setup): the receiver's bounds apply", () => {
  slowClientSuite(async (receiver) => ({
    ...(await startNest({ mail: receiver, crm: receiver }, { rawBody: true, bodyReader: true })),
    path: PATHS.mail,
  }));

  it('a body at 1 byte/s: 408 body_timeout at bodyTimeoutMs, the connection closed, no handler', async () => {
    const { receiver, state } = waitingReceiver();
    const server = await startNest({ mail: receiver, crm: receiver }, { rawBody: true, bodyReader: true });
    try {
      const delivery = mailDelivery();
      const started = Date.now();
      const { response, sent } = await slowLoris(
        server.baseUrl,
        PATHS.mail,
        delivery.headers,
        delivery.body,
        1_000,
      );
      expect(response).toMatch(/^HTTP\/1\.1 408 /);
      expect(response).toContain('"code":"body_timeout"');
      expect(sent).toBeLessThan(5);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(state.started).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('a declared 100 MB body: 413 body_too_large at once, the connection closed without reading it', async () => {
    const receivers = createTestReceivers({ maxBodyBytes: LIMIT });
    const server = await startNest(receivers, { rawBody: true, bodyReader: true });
    try {
      const delivery = mailDelivery();
      const { response, closedAfterMs } = await declaredOnly(
        server.baseUrl,
        PATHS.mail,
        delivery.headers,
        100_000_000,
      );
      expect(response).toMatch(/^HTTP\/1\.1 413 /);
      expect(response).toContain('"code":"body_too_large"');
      // Cut after the answer's linger (2 s), not at Node's requestTimeout (300 s).
      expect(closedAfterMs).toBeLessThan(10_000);
      expect(receivers.handled(delivery.deliveryId)).toBe(0);
    } finally {
      await server.close();
    }
  });
});

/** Sends the head of a request declaring `length` bytes, then a byte a second; resolves when the server closes. */
async function declaredOnly(baseUrl: string, path: string, headers: Record<string, string>, length: number) {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
  let response = '';
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    response += text;
  });
  socket.on('error', () => {});
  const lines = Object.entries({ ...headers, host: 'localhost', 'content-length': String(length) });
  socket.write(`POST ${path} HTTP/1.1\r\n${lines.map(([n, v]) => `${n}: ${v}`).join('\r\n')}\r\n\r\n{`);
  const started = Date.now();
  const timer = setInterval(() => socket.destroyed || socket.write(' '), 1_000);
  const giveUp = setTimeout(() => socket.destroy(), 15_000);
  await new Promise((resolve) => socket.once('close', resolve));
  clearTimeout(giveUp);
  clearInterval(timer);
  return { response, closedAfterMs: Date.now() - started };
}
