/**
 * A route bound to a tenant (the CRM receiver's `routeTenant`): a verified event that names another
 * tenant than its route's is refused `tenant_mismatch` (403) before any handler runs, at receipt
 * (nothing is handed off) and again in a hand-off worker, where the job's route is covered by its
 * MAC. With a secret per tenant the signature proves which tenant's secret signed; only this check
 * proves that the tenant spoke for itself (docs/security.md "One tenant signing for another").
 */
import { WebhookError } from '../shared/errors.js';
import type { DispatchableEvent } from './handler-registry.js';
import { emit } from './logger.js';
import { type Reporter, report } from './report.js';
import { type RouteSource, routeOf } from './route-secrets.js';
import type { ServiceSpec } from './service-spec.js';
import { truncateUntrusted } from './untrusted.js';
import { pipelineError } from './verdict.js';

/**
 * Undefined when `event`'s tenant is the tenant of the route read from `source` (or the receiver
 * binds no route); else the error to answer with: `tenant_mismatch`, or `internal_error` when the
 * user's function threw (reported to `onError`, phase `internal`; the sender retries).
 */
export function checkTenant(
  spec: ServiceSpec,
  reporter: Reporter<DispatchableEvent>,
  event: DispatchableEvent,
  source: RouteSource,
): WebhookError | undefined {
  const { tenants, service } = spec;
  if (!tenants) return undefined;
  const { deliveryId, name } = event;
  const claimed = tenants.event(event);
  let bound: unknown;
  try {
    bound = tenants.route(routeOf(source));
  } catch (error) {
    report(reporter, {
      level: 'error',
      message: 'routeTenant threw',
      fields: { service, deliveryId, event: name },
      error,
      phase: 'internal',
      event,
      deliveryId,
    });
    return pipelineError('internal_error', error);
  }
  const known = typeof bound === 'string' && bound.length > 0;
  if (known && bound === claimed) return undefined;
  // Not hidden: every refusal is an error line (a tenant signing for another, or a route bound to
  // none), and the sender's delivery log shows the 403.
  emit(reporter.logger, 'error', "webhook refused: its tenant is not its route's", {
    service,
    deliveryId,
    event: name,
    code: 'tenant_mismatch',
    tenant: truncateUntrusted(claimed),
    routeTenant: known ? truncateUntrusted(bound as string) : undefined,
  });
  return new WebhookError(
    'tenant_mismatch',
    known
      ? 'The event names another tenant than the one this webhook URL belongs to.'
      : 'This webhook URL belongs to no tenant.',
  );
}
