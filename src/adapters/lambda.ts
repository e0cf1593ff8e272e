/**
 * @module
 * `@svc/webhooks/lambda`: receivers as an AWS Lambda handler behind API Gateway (REST APIs, payload
 * 1.0; HTTP APIs, payload 2.0) or a Lambda function URL (the 2.0 shape).
 */

import type { BodyLimits, HeadersInput } from '../core/receiver-types.js';
import { fromBase64 } from '../handoff/job/job-codec.js';
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { httpAnswer } from '../receiver/http-answer.js';
import { bodyTooLarge } from '../shared/body-errors.js';
import { WebhookError } from '../shared/errors.js';
import { findReceiver, NOT_FOUND_BODY, type WebhookRoutes } from './routes.js';

/**
 * The fields of an API Gateway or function URL event the handler reads, typed loosely so that the
 * events of `@types/aws-lambda` (`APIGatewayProxyEvent`, `APIGatewayProxyEventV2`,
 * `LambdaFunctionURLEvent`) are all accepted.
 *
 * @example
 * ```ts
 * import type { LambdaHttpEvent } from '@svc/webhooks/lambda';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: LambdaHttpEvent): LambdaHttpEvent {
 *   return value;
 * }
 * ```
 */
export type LambdaHttpEvent = {
  /** Payload 1.0 (REST APIs). */
  httpMethod?: string;
  path?: string;
  multiValueHeaders?: Readonly<Record<string, readonly string[] | undefined>> | null;
  /** Payload 2.0 (HTTP APIs, function URLs): `requestContext.http.method`. */
  rawPath?: string;
  requestContext?: unknown;
  /** 1.0: the last value of each header, names as sent; 2.0: lowercase names, repeats comma-joined. */
  headers?: Readonly<Record<string, string | undefined>> | null;
  body?: string | null;
  isBase64Encoded?: boolean;
};

/**
 * The answer in the shape all three integrations take (1.0 and 2.0 structured responses).
 *
 * @example
 * ```ts
 * import type { LambdaHttpResult } from '@svc/webhooks/lambda';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: LambdaHttpResult): LambdaHttpResult {
 *   return value;
 * }
 * ```
 */
export type LambdaHttpResult = {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
};

function hasKeys<T extends object>(record: T | null | undefined): record is T {
  for (const _ in record) return true;
  return false;
}

/**
 * The headers by lowercase name. Payload 1.0 keeps each name as the sender spelled it, so one header
 * sent as `X-SvcMAIL-Sig` and `x-svcmail-sig` is two keys: their values are gathered under one name,
 * so a repeated signature header is refused as repeated whatever the spelling (a case-insensitive
 * lookup would read only one of them).
 */
function mergeSpellings(
  record: Readonly<Record<string, string | readonly string[] | undefined>>,
): HeadersInput {
  const merged: Record<string, string | readonly string[] | undefined> = {};
  for (const name in record) {
    const value = record[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const earlier = merged[lower];
    merged[lower] = earlier === undefined ? value : [earlier, value].flat();
  }
  return merged;
}

function methodOf(event: LambdaHttpEvent): string | undefined {
  if (typeof event.httpMethod === 'string') return event.httpMethod;
  const http = (event.requestContext as { http?: { method?: unknown } } | null | undefined)?.http;
  return typeof http?.method === 'string' ? http.method : undefined;
}

/**
 * The exact bytes API Gateway received. A base64 body is decoded to bytes, never through text: a
 * UTF-8 round trip would replace invalid sequences and drop a byte-order mark, and the signature
 * with them. A text body is what API Gateway decoded as UTF-8 (a JSON delivery always is); its
 * UTF-8 bytes are the bytes sent. The size is checked before decoding.
 */
function readBody(event: LambdaHttpEvent, { maxBodyBytes }: BodyLimits): Promise<Uint8Array> {
  const { body } = event;
  if (body === undefined || body === null || body === '') return Promise.resolve(new Uint8Array(0));
  if (typeof body !== 'string')
    return Promise.reject(new WebhookError('body_unreadable', 'The event body is not a string.'));
  if (event.isBase64Encoded === true) {
    const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
    if (Math.floor((body.length * 3) / 4) - padding > maxBodyBytes)
      return Promise.reject(bodyTooLarge(maxBodyBytes));
    try {
      return Promise.resolve(fromBase64(body));
    } catch (cause) {
      return Promise.reject(
        new WebhookError('body_unreadable', 'The event body is marked base64 but is not base64.', { cause }),
      );
    }
  }
  // Every UTF-16 unit is at least one UTF-8 byte: a longer string is over the limit unencoded.
  if (body.length > maxBodyBytes) return Promise.reject(bodyTooLarge(maxBodyBytes));
  return Promise.resolve(new TextEncoder().encode(body));
}

/**
 * An AWS Lambda handler for one receiver (any path), or for receivers by path (payload 1.0 `path`,
 * 2.0 `rawPath`, which includes the stage of an HTTP API's named stage; other paths: 404
 * `not_found`), or a function returning either, called on the first event. Works behind API Gateway
 * REST APIs (payload 1.0, base64 bodies with binary media types), HTTP APIs (payload 2.0) and Lambda
 * function URLs; headers are matched ignoring case, and a repeated signature header (1.0
 * `multiValueHeaders`, 2.0 comma-joined) is refused like on any server. The body's bytes are
 * decoded from base64 when `isBase64Encoded`, never through text, and checked against the
 * receiver's `maxBodyBytes` before decoding (413). Every refusal is the receiver's, with its status
 * and code. An event with no HTTP method (the function wired to another trigger) throws
 * `options_invalid`.
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createLambdaHandler } from '@svc/webhooks/lambda';
 *
 * const mail = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET! });
 * mail.on('bounced', async (event) => suppress(event.payload.to));
 *
 * export const handler = createLambdaHandler(mail);
 * ```
 */
export function createLambdaHandler(
  routes: WebhookRoutes | (() => WebhookRoutes),
): (event: LambdaHttpEvent) => Promise<LambdaHttpResult> {
  let resolved = typeof routes === 'function' ? undefined : routes;
  return async (event) => {
    const method = methodOf(event ?? {});
    if (method === undefined)
      throw new WebhookError(
        'options_invalid',
        'createLambdaHandler: the event is not an HTTP request (no httpMethod or requestContext.http.method): invoke the function from an API Gateway REST or HTTP API route or a function URL.',
      );
    resolved ??= (routes as () => WebhookRoutes)();
    const receiver: WebhookReceiverLike | undefined = findReceiver(
      resolved,
      event.path ?? event.rawPath ?? '/',
    );
    if (receiver === undefined)
      return {
        statusCode: 404,
        headers: { 'content-type': 'application/json' },
        body: NOT_FOUND_BODY,
        isBase64Encoded: false,
      };
    // 1.0 events carry every value of a repeated header only in multiValueHeaders.
    const headers = mergeSpellings(
      hasKeys(event.multiValueHeaders) ? event.multiValueHeaders : (event.headers ?? {}),
    );
    const verdict = await receiver.receive({ body: (limits) => readBody(event, limits), headers, method });
    const { status, headers: answerHeaders, body } = httpAnswer(verdict);
    return { statusCode: status, headers: { ...answerHeaders }, body, isBase64Encoded: false };
  };
}
