import { readHeader } from '../core/read-header.js';
import type { HeadersInput } from '../core/receiver-types.js';
import { type RawBody, toBytes } from '../verify/bytes.js';
import type { Secrets } from '../verify/secrets.js';
import { verifyThen } from '../verify/verify-or-throw.js';
import { resolveMailHeaderNames } from './header-names.js';
import { type ParseMailEventOptions, parseMailEvent } from './parse-event.js';
import type { MailWebhookEvent } from './types.js';

/**
 * Options of {@link constructMailEvent}.
 *
 * @example
 * ```ts
 * const options: ConstructMailEventOptions = { requireBodyEvent: true, maxEventAgeMs: 15 * 60_000 };
 * ```
 */
export interface ConstructMailEventOptions
  extends Pick<ParseMailEventOptions, 'headerNames' | 'requireBodyEvent' | 'maxEventAgeMs' | 'clock'> {}

/**
 * Verifies an email-service delivery and returns its typed, validated event: the signature over the
 * exact bytes first (email-service §6 rule 1), then JSON, event name, delivery id and payload schema.
 * Rejects with a `WebhookError` whose `code` and `status` say why (see docs/events.md).
 *
 * @example
 * ```ts
 * import { constructMailEvent, isWebhookError } from '@svc/webhooks';
 *
 * export async function POST(request: Request) {
 *   const body = new Uint8Array(await request.arrayBuffer());
 *   try {
 *     const event = await constructMailEvent(body, request.headers, process.env.SVC_MAIL_WEBHOOK_SECRET!);
 *     if (event.known && event.name === 'bounced') await suppress(event.payload.to);
 *     return new Response(null, { status: 204 });
 *   } catch (error) {
 *     if (isWebhookError(error)) return Response.json(error, { status: error.status });
 *     throw error;
 *   }
 * }
 * ```
 */
export function constructMailEvent(
  body: RawBody,
  headers: HeadersInput,
  secrets: Secrets,
  options: ConstructMailEventOptions = {},
): Promise<MailWebhookEvent> {
  try {
    const headerNames = resolveMailHeaderNames(options.headerNames);
    const bytes = toBytes(body);
    return verifyThen(bytes, readHeader(headers, headerNames.signature), secrets, (secretIndex) =>
      parseMailEvent(bytes, headers, { ...options, secretIndex, headerNames }),
    );
  } catch (error) {
    return Promise.reject(error);
  }
}
