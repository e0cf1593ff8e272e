/**
 * The CRM receiver's read of verified bytes it cannot run (core/quarantine.ts): the envelope's signed
 * `id` and `event` (the header's name only when the body has none), without the schema; undefined
 * when the body is not a JSON object or its `id` is not a UUID. A quarantined delivery is keyed from it,
 * so a copy sent under other header values is still one row.
 */
import { readHeaderString } from '../core/read-header.js';
import type { HeadersInput } from '../core/receiver-types.js';
import { parseJsonObject } from '../shared/parse-json.js';
import type { CrmHeaderNames } from './header-names.js';
import { UUID } from './parse-event.js';
import type { UnknownCrmEvent } from './types.js';

export function crmUnvalidatedReader(
  names: Readonly<CrmHeaderNames>,
): (body: Uint8Array, headers: HeadersInput, secretIndex: number) => UnknownCrmEvent | undefined {
  return (body, headers, secretIndex) => {
    let json: Record<string, unknown>;
    try {
      json = parseJsonObject(body, 'CRM');
    } catch {
      return undefined;
    }
    const { id, event, tenant_id: tenantId, timestamp, data } = json;
    if (typeof id !== 'string' || !UUID.test(id)) return undefined;
    const name =
      typeof event === 'string' && event.length > 0 ? event : readHeaderString(headers, names.event);
    if (name === undefined) return undefined;
    return {
      service: 'crm',
      known: false,
      name,
      deliveryId: id,
      tenantId,
      timestamp,
      data,
      envelope: json,
      secretIndex,
    } as UnknownCrmEvent;
  };
}
