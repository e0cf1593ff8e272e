import { createMailReceiver } from '@svc/webhooks';
import { createFetchHandler } from '@svc/webhooks/fetch';
import { createLambdaHandler } from '@svc/webhooks/lambda';
import type {
  APIGatewayProxyHandler,
  APIGatewayProxyHandlerV2,
  APIGatewayProxyResult,
  LambdaFunctionURLHandler,
} from 'aws-lambda';
import { describe, expectTypeOf, it } from 'vitest';

const mail = createMailReceiver({ secret: 'whsec' });

describe('createLambdaHandler', () => {
  it('is a handler of every @types/aws-lambda HTTP trigger it serves', () => {
    const handler = createLambdaHandler(mail);
    expectTypeOf(handler).toExtend<APIGatewayProxyHandler>();
    expectTypeOf(handler).toExtend<APIGatewayProxyHandlerV2>();
    expectTypeOf(handler).toExtend<LambdaFunctionURLHandler>();
    expectTypeOf(handler).returns.resolves.toExtend<APIGatewayProxyResult>();
  });
});

describe('createFetchHandler', () => {
  interface Env {
    SVC_MAIL_WEBHOOK_SECRET: string;
  }
  /** The shape of `ExportedHandler<Env>['fetch']` (@cloudflare/workers-types). */
  type WorkerFetch = (
    request: Request,
    env: Env,
    ctx: { waitUntil(promise: Promise<unknown>): void; passThroughOnException(): void },
  ) => Response | Promise<Response>;

  it("given a function of the Worker's env, is a Worker's fetch typed with that env", () => {
    const handler = createFetchHandler((env: Env) =>
      createMailReceiver({ secret: env.SVC_MAIL_WEBHOOK_SECRET }),
    );
    expectTypeOf(handler).toExtend<WorkerFetch>();
    expectTypeOf(handler).parameter(1).toEqualTypeOf<Env>();
    // @ts-expect-error: the env is required when the function takes one
    void handler(new Request('http://localhost/'));
  });

  it('given routes or a function of nothing, is a one-argument handler (Next.js route, Bun, Deno) and a Worker fetch', () => {
    const handler = createFetchHandler(() => mail);
    expectTypeOf(handler).toEqualTypeOf<(request: Request) => Promise<Response>>();
    expectTypeOf(handler).toExtend<WorkerFetch>();
    expectTypeOf(createFetchHandler(mail)).toEqualTypeOf<(request: Request) => Promise<Response>>();
  });
});
