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

  it('one Clock: the virtual and the real test clocks are receiver and client clocks', () => {
    expectTypeOf(createVirtualClock()).toExtend<Clock>();
    expectTypeOf(createRealClock()).toExtend<Clock>();
  });

  it('the emitter’s webhook record and the management API’s have distinct names', () => {
    expectTypeOf<MailEmitterWebhook>().not.toEqualTypeOf<MailWebhook>();
    expectTypeOf<MailEmitterWebhook['consecutiveFailures']>().toEqualTypeOf<number>();
  });
});
