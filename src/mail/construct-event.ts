import { readHeader } from '../core/read-header.js';
import type { HeadersInput } from '../core/receiver-types.js';
import { type RawBody, toBytes } from '../verify/bytes.js';
import type { Secrets } from '../verify/secrets.js';
import { type MailHeaderNames, resolveMailHeaderNames } from './header-names.js';
import { parseMailEvent } from './parse-event.js';
import { verifyOrThrow } from './parse-helpers.js';
import type { MailWebhookEvent } from './types.js';

/**
 * Options of {@link constructMailEvent}.
 *
 * @example
 * ```ts
 * const options: ConstructMailEventOptions = { headerNames: { signature: 'X-AcmeMAIL-Sig' } };
 * ```
 */
export interface ConstructMailEventOptions {
  /** Renamed headers ("Svc" stands for the vendor's name); defaults are {@link MAIL_HEADER_NAMES}. */
  headerNames?: Partial<MailHeaderNames>;
}

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
export async function constructMailEvent(
  body: RawBody,
  headers: HeadersInput,
  secrets: Secrets,
  options: ConstructMailEventOptions = {},
): Promise<MailWebhookEvent> {
  const headerNames = resolveMailHeaderNames(options.headerNames);
  const bytes = toBytes(body);
  const secretIndex = await verifyOrThrow(bytes, readHeader(headers, headerNames.signature), secrets);
  return parseMailEvent(bytes, headers, { secretIndex, headerNames });
}
