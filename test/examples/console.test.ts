/**
 * Every example, configured as its README runs it (no logger passed), shows a handler that throws on
 * the console: the receiver's error line with the delivery's fields, then the error with its stack.
 * Servers run for real on 127.0.0.1; the hand-off examples' workers run the job a receiver wrote.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryStore, type HandoffTarget } from '@svc/webhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp as createExpressApp } from '../../examples/express/server.js';
import { createApp as createFastifyApp } from '../../examples/fastify/server.js';
import { createReceivers as createBullmqReceivers } from '../../examples/handoff-bullmq/receivers.js';
import { createReceivers as createPgBossReceivers } from '../../examples/handoff-pg-boss/receivers.js';
import { createApp as createNodeApp } from '../../examples/node-http/server.js';
import type { HandoffJob } from '../../src/handoff/job/types.js';
import { CRM_SECRET, MAIL_SECRET, mailDelivery, toRequest } from '../receivers/support.js';

const secrets = { mailSecret: MAIL_SECRET, crmSecret: CRM_SECRET };
const fail = (): never => {
  throw new Error('crm database down');
};

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** console.error as the app would print it, captured. */
function consoleErrors(): () => unknown[][] {
  const error = vi.spyOn(console, 'error').mockImplementation(() => {});
  vi.spyOn(console, 'warn').mockImplementation(() => {});
  return () => error.mock.calls;
}

function expectThrownOnConsole(calls: unknown[][], deliveryId: string): void {
  const thrown = calls.find(([line]) => String(line).includes('webhook handler threw'));
  expect(thrown, 'a console.error line for the handler').toBeDefined();
  expect(thrown![0]).toContain(`deliveryId=${deliveryId}`);
  expect(thrown![1]).toBeInstanceOf(Error);
  expect((thrown![1] as Error).stack).toMatch(/^Error: crm database down\n\s+at /);
}

async function post(server: Server, path: string): Promise<{ status: number; deliveryId: string }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const delivery = mailDelivery('delivered');
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    });
    return { status: response.status, deliveryId: delivery.deliveryId };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('a throwing handler is on the console with no configuration', () => {
  it('examples/express', async () => {
    const errors = consoleErrors();
    const { status, deliveryId } = await post(
      createServer(createExpressApp({ ...secrets, handle: fail })),
      '/webhooks/mail',
    );
    expect(status).toBe(500);
    expectThrownOnConsole(errors(), deliveryId);
  });

  it('examples/node-http', async () => {
    const errors = consoleErrors();
    const { status, deliveryId } = await post(createNodeApp({ ...secrets, print: fail }), '/webhooks/mail');
    expect(status).toBe(500);
    expectThrownOnConsole(errors(), deliveryId);
  });

  it('examples/fastify', async () => {
    const errors = consoleErrors();
    const app = createFastifyApp({ ...secrets, print: fail });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const delivery = mailDelivery('delivered');
      const { port } = app.server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/webhooks/mail`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      expect(response.status).toBe(500);
      expectThrownOnConsole(errors(), delivery.deliveryId);
    } finally {
      await app.close();
    }
  });

  it('examples/next', async () => {
    vi.stubEnv('SVC_MAIL_WEBHOOK_SECRET', MAIL_SECRET);
    vi.stubEnv('SVC_CRM_WEBHOOK_SECRET', CRM_SECRET);
    const errors = consoleErrors();
    const { receivers } = await import('../../examples/next/lib/receivers.js');
    const { POST } = await import('../../examples/next/app/webhooks/mail/route.js');
    receivers().mail.on('delivered', fail);
    const delivery = mailDelivery('delivered');
    expect((await POST(toRequest(delivery))).status).toBe(500);
    expectThrownOnConsole(errors(), delivery.deliveryId);
  });

  it.each([
    ['examples/handoff-bullmq', createBullmqReceivers],
    ['examples/handoff-pg-boss', createPgBossReceivers],
  ])('%s: in the worker', async (_example, createReceivers) => {
    const jobs: HandoffJob[] = [];
    const target: HandoffTarget = {
      async enqueue(job) {
        jobs.push(structuredClone(job));
        return 'enqueued';
      },
    };
    const receiving = createReceivers({
      ...secrets,
      dedup: createMemoryStore(),
      handoff: { mail: target, crm: target },
    });
    const delivery = mailDelivery('delivered');
    expect((await receiving.mail.handle(toRequest(delivery))).status).toBe(200);
    const errors = consoleErrors();
    const worker = createReceivers({ ...secrets, dedup: createMemoryStore(), print: fail });
    expect(await worker.mail.runJob(jobs[0], { attempt: 1 })).toMatchObject({ code: 'handler_failed' });
    expectThrownOnConsole(errors(), delivery.deliveryId);
  });
});
