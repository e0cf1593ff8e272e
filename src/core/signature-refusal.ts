/**
 * The refusal of a delivery whose signature did not verify. A missing signature says which header
 * the receiver read and, when the request carries another service's signature header instead, that
 * the delivery was most likely sent to the wrong route (a CRM webhook pointed at the mail route).
 */
import { WebhookError } from '../shared/errors.js';
import type { VerifyFailureCode } from '../verify/verify-signature.js';
import { readHeader } from './read-header.js';
import type { HeadersInput } from './receiver-types.js';

/** Another service's signature header (lowercase), to recognise its deliveries at the wrong route. */
export interface ForeignSignature {
  readonly service: string;
  readonly header: string;
}

/**
 * The `WebhookError` a failed verification answers with; `signature_missing` names `header` (the
 * one this receiver reads) and any of `foreign` the request carries. Header names only, never values.
 */
export function signatureRefusal(
  failure: { code: VerifyFailureCode; message: string },
  service: string,
  header: string,
  headers: HeadersInput,
  foreign: readonly ForeignSignature[] = [],
): WebhookError {
  if (failure.code !== 'signature_missing') return new WebhookError(failure.code, failure.message);
  let message = `The signature header ${header} is missing or empty.`;
  for (const other of foreign) {
    if (other.header === header || readHeader(headers, other.header) === undefined) continue;
    message +=
      ` The request carries ${other.header}, the ${other.service} service's signature header: ` +
      `a ${other.service} delivery sent to the ${service} receiver? Point that webhook at the ${other.service} route.`;
    break;
  }
  return new WebhookError('signature_missing', message);
}
