import { readHeader } from '../core/read-header.js';
import type { HeadersInput } from '../core/receiver-types.js';
import { type RawBody, toBytes } from '../verify/bytes.js';
import type { Secrets } from '../verify/secrets.js';
import { verifyThen } from '../verify/verify-or-throw.js';
import { resolveCrmHeaderNames } from './header-names.js';
import { type ParseCrmEventOptions, parseCrmEvent } from './parse-event.js';
import type { CrmWebhookEvent } from './types.js';

/**
 * Options of {@link constructCrmEvent}.
 *
 * @example
 * ```ts
 * const options: ConstructCrmEventOptions = { headerNames: { signature: 'X-Acme-Signature' }, maxEventAgeMs: 60_000 };
 * ```
 */
export interface ConstructCrmEventOptions
  extends Pick<ParseCrmEventOptions, 'headerNames' | 'maxEventAgeMs' | 'clock'> {}

/**
 * Verifies a CRM delivery and returns its typed, validated event: the signature over the exact bytes
 * first (crm-service §6 rule 2), then JSON, event name, delivery id, envelope and data schema.
 * Rejects with a `WebhookError` whose `code` and `status` say why (see docs/events.md).
 *
 * @example
 * ```ts
 * import { constructCrmEvent, isWebhookError } from '@svc/webhooks';
 *
 * export async function POST(request: Request) {
 *   const body = new Uint8Array(await request.arrayBuffer());
 *   try {
 *     const event = await constructCrmEvent(body, request.headers, process.env.SVC_CRM_WEBHOOK_SECRET!);
 *     if (event.known && event.name === 'deal.won') await celebrate(event.tenantId, event.data.title);
 *     return new Response(null, { status: 204 });
 *   } catch (error) {
 *     if (isWebhookError(error)) return Response.json(error, { status: error.status });
 *     throw error;
 *   }
 * }
 * ```
 */
export function constructCrmEvent(
  body: RawBody,
  headers: HeadersInput,
  secrets: Secrets,
  options: ConstructCrmEventOptions = {},
): Promise<CrmWebhookEvent> {
  try {
    const headerNames = resolveCrmHeaderNames(options.headerNames);
    const bytes = toBytes(body);
    return verifyThen(bytes, readHeader(headers, headerNames.signature), secrets, (secretIndex) =>
      parseCrmEvent(bytes, headers, { ...options, secretIndex, headerNames }),
    );
  } catch (error) {
    return Promise.reject(error);
  }
}
