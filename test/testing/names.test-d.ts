import type { Clock } from '@svc/webhooks';
import {
  type AttemptRecord,
  createMailEmitter,
  createVirtualClock,
  type DeliveryRecord,
  type DeliveryStatus,
  type EmittedAttempt,
  type EmittedDelivery,
  type EmittedDeliveryStatus,
  type EmitterClock,
  type EmitterEvent,
  type EmitterReport,
  type SchedulerClock,
} from '@svc/webhooks/testing';
import { describe, expectTypeOf, it } from 'vitest';

describe('testing type names: the emitter view, with the old names kept as aliases', () => {
  it('emit, getDelivery and listDeliveries answer the Emitted* types', () => {
    const emitter = createMailEmitter();
    expectTypeOf(emitter.emit('bounced')).resolves.toEqualTypeOf<EmittedDelivery[]>();
    expectTypeOf(emitter.getDelivery('d').status).toEqualTypeOf<EmittedDeliveryStatus>();
    expectTypeOf(emitter.listDeliveries('w')).toEqualTypeOf<EmittedAttempt[]>();
    expectTypeOf<Parameters<typeof emitter.onEvent>[0]>().parameter(0).toEqualTypeOf<EmitterReport>();
  });

  it('the deprecated names are the same types', () => {
    expectTypeOf<DeliveryRecord>().toEqualTypeOf<EmittedDelivery>();
    expectTypeOf<AttemptRecord>().toEqualTypeOf<EmittedAttempt>();
    expectTypeOf<DeliveryStatus>().toEqualTypeOf<EmittedDeliveryStatus>();
    expectTypeOf<EmitterEvent>().toEqualTypeOf<EmitterReport>();
    expectTypeOf<SchedulerClock>().toEqualTypeOf<EmitterClock>();
  });

  it('an emitter clock is also a receiver clock', () => {
    expectTypeOf(createVirtualClock()).toExtend<EmitterClock>();
    expectTypeOf<EmitterClock>().toExtend<Clock>();
  });
});
