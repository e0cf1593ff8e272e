/**
 * AWS Lambda events as AWS documents them, and a stand-in for API Gateway on 127.0.0.1 that turns
 * real HTTP requests into them.
 *
 * The templates follow the example events of the AWS documentation: "Input format of a Lambda
 * function for proxy integration" (REST APIs, payload 1.0), "Working with AWS Lambda proxy
 * integrations for HTTP APIs" (payload 2.0) and "Invoking Lambda function URLs" (request payload).
 * Differences AWS describes and the templates keep: 1.0 keeps the sender's header case, carries the
 * last value of a repeated header in `headers` and all of them in `multiValueHeaders`; 2.0 lowercases
 * names and joins repeated values with commas; both hand the body over as a string, base64 when
 * `isBase64Encoded`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2, LambdaFunctionURLEvent } from 'aws-lambda';
import { listen } from './servers.js';

export interface EventParts {
  method?: string;
  path?: string;
  /** Name → values, in the sender's case and order. */
  headers: Record<string, string | string[]>;
  body: string | null;
  isBase64Encoded: boolean;
}

const list = (value: string | string[]) => (Array.isArray(value) ? value : [value]);

/** A REST API (payload 1.0) proxy event. */
export function restApiEvent(parts: EventParts): APIGatewayProxyEvent {
  const { method = 'POST', path = '/webhooks/mail' } = parts;
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(parts.headers)) {
    headers[name] = list(value).at(-1)!;
    multiValueHeaders[name] = list(value);
  }
  return {
    resource: path,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'id',
      authorizer: { claims: null, scopes: null },
      domainName: 'id.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'id',
      extendedRequestId: 'request-id',
      httpMethod: method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '192.0.2.1',
        user: null,
        userAgent: 'user-agent',
        userArn: null,
      },
      path,
      protocol: 'HTTP/1.1',
      requestId: 'id=',
      requestTime: '04/Mar/2020:19:15:17 +0000',
      requestTimeEpoch: 1583349317135,
      resourceId: 'resource-id',
      resourcePath: path,
      stage: '$default',
    },
    pathParameters: null,
    stageVariables: null,
    body: parts.body,
    isBase64Encoded: parts.isBase64Encoded,
  };
}

function v2Headers(headers: EventParts['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    out[lower] = out[lower] === undefined ? list(value).join(',') : `${out[lower]},${list(value).join(',')}`;
  }
  return out;
}

/** An HTTP API (payload 2.0) event. */
export function httpApiEvent(parts: EventParts): APIGatewayProxyEventV2 {
  const { method = 'POST', path = '/webhooks/mail' } = parts;
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: v2Headers(parts.headers),
    requestContext: {
      accountId: '123456789012',
      apiId: 'api-id',
      domainName: 'id.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'id',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'agent' },
      requestId: 'id',
      routeKey: '$default',
      stage: '$default',
      time: '12/Mar/2020:19:03:58 +0000',
      timeEpoch: 1583348638390,
    },
    isBase64Encoded: parts.isBase64Encoded,
  };
  if (parts.body !== null) event.body = parts.body;
  return event;
}

/** A Lambda function URL request payload (the 2.0 shape, on a lambda-url domain). */
export function functionUrlEvent(parts: EventParts): LambdaFunctionURLEvent {
  const event = httpApiEvent(parts);
  return {
    ...event,
    requestContext: {
      ...event.requestContext,
      apiId: '<urlid>',
      domainName: '<url-id>.lambda-url.us-west-2.on.aws',
      domainPrefix: '<url-id>',
    },
  };
}

export type GatewayKind = 'rest' | 'http' | 'url';

const BUILD: Record<GatewayKind, (parts: EventParts) => object> = {
  rest: restApiEvent,
  http: httpApiEvent,
  url: functionUrlEvent,
};

// API Gateway refuses payloads over 10 MB itself; the stand-in stops reading there too.
const GATEWAY_LIMIT = 10 * 1024 * 1024;

interface LambdaResultLike {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: boolean;
}

/** Header names and values as the client sent them (IncomingMessage lowercases `headers`). */
function sentHeaders(req: IncomingMessage): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    out[name] = [...(out[name] ?? []), req.rawHeaders[i + 1]!];
  }
  return out;
}

/**
 * API Gateway on 127.0.0.1: reads each request whole (413 of its own past 10 MB, as API Gateway
 * answers, without buffering the rest), hands the handler the event `kind` describes and writes the result back. Bodies are
 * base64 for a REST API with the binary media type `*\/*` and for a function URL; an HTTP API sends
 * JSON as text and anything else as base64.
 */
export async function startApiGateway(
  kind: GatewayKind,
  handler: (event: never) => Promise<LambdaResultLike>,
): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      length += chunk.byteLength;
      if (length > GATEWAY_LIMIT) {
        refused = true;
        // Answered at once; the rest of the upload is read and dropped (a reset could lose the answer).
        res.writeHead(413, { 'content-type': 'application/json' });
        res.end('{"message":"Request Entity Too Large"}');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', async () => {
      if (refused) return;
      const bytes = Buffer.concat(chunks);
      const text = kind === 'http' && /json|text/.test(req.headers['content-type'] ?? '');
      const event = BUILD[kind]({
        method: req.method!,
        path: new URL(req.url!, 'http://gateway').pathname,
        headers: sentHeaders(req),
        body: bytes.byteLength === 0 ? null : text ? bytes.toString('utf8') : bytes.toString('base64'),
        isBase64Encoded: bytes.byteLength > 0 && !text,
      });
      try {
        const result = await handler(event as never);
        res.writeHead(result.statusCode, result.headers);
        res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
      } catch (error) {
        // API Gateway answers a failed invocation with 502.
        res
          .writeHead(502, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: String(error) }));
      }
    });
  });
  return listen(server);
}
