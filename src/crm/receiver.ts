/**
 * The CRM receiver: verify, parse, validate, deduplicate and dispatch CRM webhooks.
 */

import { checkMaxEventAge } from '../core/event-age.js';
import { withRepairs } from '../core/repair.js';
import type { SecretRequest } from '../core/route-secrets.js';
import { createReceiver, type WebhookReceiver } from '../receiver/create-receiver.js';
import { type ReceiverOptions, resolveOptions } from '../receiver/receiver-options.js';
import { WebhookError } from '../shared/errors.js';
import { type CrmDedupKey, crmDedupKeyOf } from './dedup-key.js';
import { CRM_EVENT_NAMES } from './event-names.js';
import { type CrmHeaderNames, resolveCrmHeaderNames } from './header-names.js';
import { crmEventParser } from './parse-event.js';
import { crmDrift } from './parse-schemas.js';
import { type CrmRepairs, crmRepairSeam } from './repair.js';
import type { CrmEvent, CrmWebhookEvent, UnknownCrmEvent } from './types.js';
import { crmUnvalidatedReader } from './unvalidated.js';

/**
 * Default `ttlMs` of the CRM receiver: 1 day. A CRM delivery is attempted at most 3 times, 1 s then
 * 2 s apart, each attempt waiting up to 10 s, and never again after that (crm-service §3, §6 rule 5,
 * §8): every copy arrives within about 35 s. No resend route exists. A day covers that window with
 * a wide margin (sender queueing, clock skew) while keeping the store small.
 */
export const CRM_DEFAULT_TTL_MS = 86_400_000;

/**
 * Options of {@link createCrmReceiver}.
 *
 * @example
 * ```ts
 * const options: CrmReceiverOptions = { secret: process.env.SVC_CRM_WEBHOOK_SECRET!, maxBodyBytes: 256 * 1024 };
 * ```
 */
export interface CrmReceiverOptions extends ReceiverOptions {
  /** Dedup key strategy; default `'delivery-id'`. See {@link CrmDedupKey}. */
  dedupKey?: CrmDedupKey;
  /** Renamed headers ("Svc" stands for the vendor's name); defaults `X-Svc-Signature`, `-Event`, `-Delivery`. */
  headerNames?: Partial<CrmHeaderNames>;
  /**
   * Refuse deliveries whose signed timestamp (the envelope `timestamp`, crm-service §2) is older than
   * this many ms (400 `event_too_old`) or more than 5 minutes ahead (400 `event_in_future`), timed by
   * `clock`. Bounds how long a captured body can be replayed. Default: no limit, because the spec
   * promises nothing about a delivery's age. See docs/security.md.
   */
  maxEventAgeMs?: number;
  /**
   * Binds each route to its tenant: the CRM `tenant_id` of the webhook registered at the route a
   * delivery came to (`({ params }) => params.tenant`), `undefined` for a route of none. A verified
   * delivery whose envelope's `tenant_id` is another is refused with 403 `tenant_mismatch` before
   * any handler runs or anything is handed off, and again in hand-off workers (the job carries its
   * route). With a secret per tenant, a tenant can sign a body naming any tenant: this is the check
   * that it named itself (docs/receivers-tenants.md "Bind a route to its tenant"). Synchronous, called once
   * per verified delivery; what it throws is 500 `internal_error`. Default: no binding.
   */
  routeTenant?: (route: SecretRequest) => string | undefined;
  /**
   * Per event, the app's correction of an event's `data` that fails this version's schema, so a
   * delivery the service sent in a changed shape runs without a new release of this library: at
   * receipt, and when a `quarantined` inbox row is re-driven. See {@link CrmRepairs} and docs/inbox.md
   * "When the payload changes". Default: none.
   */
  repair?: CrmRepairs;
}

/**
 * A receiver of CRM webhooks; `on(['deal.won', 'deal.lost'], …)` narrows the event to those two.
 *
 * @example
 * ```ts
 * const receiver: CrmReceiver = createCrmReceiver({ secret });
 * receiver.on('deal.won', (event) => console.log(event.data.value));
 * ```
 */
export type CrmReceiver = WebhookReceiver<CrmEvent, UnknownCrmEvent>;

/**
 * Creates the CRM receiver. Throws `secret_invalid` / `options_invalid` at once for a bad
 * configuration. Mount `receiver.handle` (web `Request` -> `Response`) or pass the receiver to an
 * adapter from `@svc/webhooks/node`, `/express`, `/fastify`, `/next`.
 *
 * @example
 * ```ts
 * import { createCrmReceiver } from '@svc/webhooks';
 * import { createRedisStore } from '@svc/webhooks/redis';
 *
 * const receiver = createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET!, dedup: createRedisStore({ client }) })
 *   .on(['deal.won', 'deal.lost'], async (event, { dedupKey }) => {
 *     await queue.add('deal-closed', event.data, { jobId: dedupKey });
 *   });
 *
 * export const POST = (request: Request) => receiver.handle(request);
 * ```
 */
export function createCrmReceiver(options: CrmReceiverOptions): CrmReceiver {
  const resolved = resolveOptions('createCrmReceiver', options, CRM_DEFAULT_TTL_MS);
  const headerNames = resolveCrmHeaderNames(options.headerNames);
  const dedupKey = crmDedupKeyOf(options.dedupKey);
  const maxEventAgeMs = checkMaxEventAge('createCrmReceiver', options.maxEventAgeMs);
  const { routeTenant } = options;
  if (routeTenant !== undefined && typeof routeTenant !== 'function')
    throw new WebhookError(
      'options_invalid',
      'createCrmReceiver: routeTenant must be a function of the route returning its tenant id.',
    );
  const { clock } = resolved;
  const spec = withRepairs<CrmWebhookEvent>(
    'createCrmReceiver',
    {
      service: 'crm',
      headerNames,
      knownNames: CRM_EVENT_NAMES,
      // email-service §6: its signature header, named here so an email delivery at this route is recognised.
      foreignSignatures: [{ service: 'mail', header: 'x-svcmail-sig' }],
      parse: crmEventParser('createCrmReceiver', { headerNames, maxEventAgeMs, clock }),
      drift: crmDrift,
      // crm-service §2: every envelope carries its signed `timestamp`.
      timestamp: (event) => event.timestamp,
      unvalidated: crmUnvalidatedReader(headerNames),
      dedupKey,
      // crm-service §2: the envelope's tenant_id, compared with the route's tenant (core/route-tenant.ts).
      ...(routeTenant && { tenants: { route: routeTenant, event: (event) => event.tenantId } }),
    },
    crmRepairSeam,
    options.repair,
  );
  return createReceiver<CrmEvent, UnknownCrmEvent>(spec, resolved);
}
