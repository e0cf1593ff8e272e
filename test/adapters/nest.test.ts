import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Controller, Injectable, Module, Post, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { WebhookReceiverLike } from '@svc/webhooks';
import { createNestHandler } from '@svc/webhooks/nest';
import type { Request, Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceTarget, conformance } from './conformance.js';
import { mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { PATHS } from './support/servers.js';
import { slowClientSuite } from './support/slow-clients.js';

const LIMIT = 64 * 1024;

// The app of docs/adapters.md "NestJS": the receivers are a provider, the controller hands each
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

type Options = { rawBody?: boolean; bodyParser?: boolean };

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
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { logger: false, ...options });
  // As docs/adapters.md says: Nest's JSON parser limit (100 kB by default) at the receiver's.
  // biome-ignore lint/correctness/useHookAtTopLevel: Nest's method, not a React hook.
  if (options.rawBody) app.useBodyParser('json', { limit: LIMIT });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, close: () => app.close() };
}

for (const options of [{ rawBody: true }, { bodyParser: false }] satisfies Options[]) {
  describe(`NestJS 12 (platform-express) with ${JSON.stringify(options)}`, () => {
    let target: ConformanceTarget;
    beforeAll(async () => {
      const receivers = createTestReceivers({ maxBodyBytes: LIMIT });
      target = { ...(await startNest(receivers, options)), paths: PATHS, handled: receivers.handled };
    });
    afterAll(() => target.close());
    // With rawBody, Nest's JSON parser reads the body first (its own 400 for bad JSON, 413 past its limit).
    conformance(() => target, { maxBodyBytes: LIMIT, parserInFront: options.rawBody ? 'json' : undefined });
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
