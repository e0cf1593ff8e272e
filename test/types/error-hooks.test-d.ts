import type { CrmWebhookEvent, MailWebhookEvent } from '@svc/webhooks';
import { describe, expectTypeOf, it } from 'vitest';
import type { WebhookErrorPhase } from '../../src/core/handler-types.js';
import {
  type Clock,
  createCrmReceiver,
  createMailReceiver,
  type ErrorInfo,
  type ErrorPhase,
  type WebhookError,
} from '../../src/index.js';
import { createVirtualClock } from '../../src/testing/index.js';

const secret = 'whsec_type_tests_0123456789';

describe('onError types', () => {
  it('narrowing info.phase types info.error: WebhookError for the receiver verdicts, unknown for user code', () => {
    createMailReceiver({ secret }).onError((error, info) => {
      // Before narrowing, nothing is promised: a handler can throw anything.
      expectTypeOf(error).toEqualTypeOf<unknown>();
      expectTypeOf(info.phase).toEqualTypeOf<ErrorPhase>();
      if (info.phase === 'timeout') {
        expectTypeOf(info.error).toEqualTypeOf<WebhookError>();
        expectTypeOf(info.error.code).not.toBeAny();
      }
      if (info.phase === 'invalid') {
        expectTypeOf(info.error).toEqualTypeOf<WebhookError>();
        expectTypeOf(info.body).toEqualTypeOf<Uint8Array | undefined>();
      }
      if (info.phase === 'handler') {
        expectTypeOf(info.error).toEqualTypeOf<unknown>();
        // @ts-expect-error a handler's throw is not known to be an Error
        info.error.message;
      }
    });
  });

  it('the event in info is the receiver service union', () => {
    createMailReceiver({ secret }).onError((_error, info) => {
      expectTypeOf(info.event).toExtend<MailWebhookEvent | undefined>();
    });
    createCrmReceiver({ secret }).onError((_error, info) => {
      expectTypeOf(info.event).toExtend<CrmWebhookEvent | undefined>();
    });
  });

  it('WebhookErrorPhase is the subset of ErrorPhase with a typed error', () => {
    expectTypeOf<WebhookErrorPhase>().toEqualTypeOf<'timeout' | 'invalid'>();
    expectTypeOf<WebhookErrorPhase>().toExtend<ErrorPhase>();
    type ClaimInfo = ErrorInfo<MailWebhookEvent> & { phase: 'claim' };
    expectTypeOf<ClaimInfo['error']>().toEqualTypeOf<unknown>();
    type TimeoutInfo = ErrorInfo<MailWebhookEvent> & { phase: 'timeout' };
    expectTypeOf<TimeoutInfo['error']>().toEqualTypeOf<WebhookError>();
  });
});

describe('clock timers', () => {
  it('a virtual clock is a receiver Clock with timers; a now()-only clock still is one', () => {
    expectTypeOf(createVirtualClock()).toExtend<Clock>();
    expectTypeOf({ now: () => 0 }).toExtend<Clock>();
    createMailReceiver({ secret, clock: createVirtualClock() });
  });
});
