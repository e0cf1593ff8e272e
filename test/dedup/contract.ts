/**
 * The exported store contract (`storeContract` of @svc/webhooks/testing) over a store kind of
 * test/support/stores.ts, as vitest tests: the same checks a user runs on a store of their own.
 */
import { storeContract as checksOf } from '@svc/webhooks/testing';
import { it } from 'vitest';
import type { StoreKind } from '../support/stores.js';

/** Defines the contract tests for `kind` (call inside its describe). */
export function storeContract(kind: StoreKind): void {
  const checks = checksOf({
    create: ({ clock }) => kind.create({ clock }),
    without: kind.without,
    unreachable: kind.createUnreachable?.bind(kind),
    stall: kind.stall?.bind(kind),
    cleanup: (store) => store.close?.(),
  });
  for (const check of checks) it(check.name, check.run);
}
