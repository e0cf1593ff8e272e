import type { Clock } from '@svc/webhooks';
import type { MailWebhook } from '@svc/webhooks/manage';
import {
  createMailEmitter,
  createRealClock,
  createVirtualClock,
  type EmittedAttempt,
  type EmittedDelivery,
  type EmittedDeliveryStatus,
  type EmitterReport,
  type MailEmitterWebhook,
} from '@svc/webhooks/testing';
import { describe, expectTypeOf, it } from 'vitest';

describe('testing type names: the emitter view', () => {
  it('emit, getDelivery and listDeliveries answer the Emitted* types', () => {
    const emitter = createMailEmitter();
    expectTypeOf(emitter.emit('bounced')).resolves.toEqualTypeOf<EmittedDelivery[]>();
    expectTypeOf(emitter.getDelivery('d').status).toEqualTypeOf<EmittedDeliveryStatus>();
    expectTypeOf(emitter.listDeliveries('w')).toEqualTypeOf<EmittedAttempt[]>();
    expectTypeOf<Parameters<typeof emitter.onEvent>[0]>().parameter(0).toEqualTypeOf<EmitterReport>();
  });

  it('one Clock: the virtual and the real test clocks are full Clocks, the one type the emitters take', () => {
    expectTypeOf(createVirtualClock()).toExtend<Required<Clock>>();
    expectTypeOf(createRealClock()).toEqualTypeOf<Required<Clock>>();
    expectTypeOf<NonNullable<Parameters<typeof createMailEmitter>[0]>['clock']>().toEqualTypeOf<
      Required<Clock> | undefined
    >();
    // A clock without timers (a receiver's `{ now }`) cannot run an emitter's retries.
    // @ts-expect-error: setTimeout, clearTimeout, sleep and track are missing
    createMailEmitter({ clock: { now: () => 0 } });
  });

  it('the emitter’s webhook record and the management API’s have distinct names', () => {
    expectTypeOf<MailEmitterWebhook>().not.toEqualTypeOf<MailWebhook>();
    expectTypeOf<MailEmitterWebhook['consecutiveFailures']>().toEqualTypeOf<number>();
  });
});
