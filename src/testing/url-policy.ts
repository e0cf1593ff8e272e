import { WebhookError } from '../shared/errors.js';
import { ipv4Internal, ipv6Internal, parseIpv4, parseIpv6 } from './ip-ranges.js';

/**
 * Which webhook URLs an emitter accepts at registration.
 *
 * @example
 * ```ts
 * const policy: UrlPolicyOptions = { allowHosts: ['127.0.0.1'] };
 * checkWebhookUrl('http://127.0.0.1:3000/hooks', policy);
 * ```
 *
 * @example
 * ```ts
 * import type { UrlPolicyOptions } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: UrlPolicyOptions): UrlPolicyOptions {
 *   return value;
 * }
 * ```
 */
export interface UrlPolicyOptions {
  /**
   * Accept internal addresses (loopback, private, link-local, `localhost`): for tests against a local
   * server. Cloud-metadata addresses stay refused unless listed in `allowHosts`. Default `false`.
   */
  allowPrivateNetworks?: boolean;
  /** Host names or IP literals accepted even though internal, e.g. `['127.0.0.1']`. */
  allowHosts?: readonly string[];
}

const METADATA_HOSTS = new Set([
  '169.254.169.254',
  '[fd00:ec2::254]',
  'metadata.google.internal',
  'metadata',
]);
const INTERNAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/;

/**
 * Why `hostname` (as `URL` normalised it) is internal, or null when it is public. Names are not
 * resolved: a public name whose DNS points inside is not detected (the services check resolution).
 */
export function internalHostReason(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (METADATA_HOSTS.has(host)) return 'cloud metadata';
  if (INTERNAL_NAME.test(host) || (!host.includes('.') && !host.includes(':'))) return 'internal host name';
  const v4 = parseIpv4(host);
  if (v4 !== null) return ipv4Internal(v4);
  const v6 = parseIpv6(host);
  if (v6 !== null) return ipv6Internal(v6);
  return null;
}

/**
 * Checks a webhook URL as the services do at registration and returns it normalised; throws
 * `WebhookError('webhook_url_refused')` (422) for internal targets and `invalid_payload` (400) for
 * something that is not an absolute http(s) URL.
 */
export function checkWebhookUrl(url: unknown, options: UrlPolicyOptions = {}): string {
  const { allowPrivateNetworks = false, allowHosts = [] } = options;
  if (typeof url !== 'string') throw new WebhookError('invalid_payload', 'url must be a string.');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WebhookError('invalid_payload', 'url must be an absolute http(s) URL.');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new WebhookError('invalid_payload', `url must use http or https, not ${parsed.protocol}`);
  }
  if (parsed.username || parsed.password) {
    throw new WebhookError('invalid_payload', 'url must not carry credentials.');
  }
  const host = parsed.hostname.toLowerCase();
  const allowed = allowHosts.some((h) => h.toLowerCase() === host || `[${h.toLowerCase()}]` === host);
  const reason = allowed ? null : internalHostReason(host);
  if (reason && !(allowPrivateNetworks && reason !== 'cloud metadata')) {
    throw new WebhookError(
      'webhook_url_refused',
      `The webhook URL points to an internal address (${reason}); the services refuse it. ` +
        'Tests against a local server pass allowPrivateNetworks: true to the emitter.',
    );
  }
  return parsed.href;
}
