/**
 * The `logger` option takes pino, winston, bunyan and `console` as they are, the function form with
 * its entry typed, and `false`; the `onOutcome` hook's record and the `telemetry` option are typed.
 */
import {
  createCrmReceiver,
  createMailReceiver,
  type LogEntry,
  type Logger,
  type Outcome,
  type Verdict,
  type WebhookErrorCode,
} from '@svc/webhooks';
import { createOtelTelemetry, type Telemetry } from '@svc/webhooks/otel';
import bunyan from 'bunyan';
import pino from 'pino';
import { describe, expectTypeOf, it } from 'vitest';
import winston from 'winston';

const secret = 'whsec_types_0123456789abcdef';

describe('logger', () => {
  it('accepts pino, winston, bunyan and console as they are, and false', () => {
    createMailReceiver({ secret, logger: pino() });
    createMailReceiver({ secret, logger: pino().child({ app: 'billing' }) });
    createMailReceiver({ secret, logger: winston.createLogger() });
    createCrmReceiver({ secret, logger: bunyan.createLogger({ name: 'app' }) });
    createCrmReceiver({ secret, logger: console });
    createCrmReceiver({ secret, logger: false });
  });

  it('types the function form’s entry, and the error under err', () => {
    createMailReceiver({
      secret,
      logger: (entry) => {
        expectTypeOf(entry).toEqualTypeOf<LogEntry>();
        expectTypeOf(entry.fields.err).toEqualTypeOf<string | number | boolean | Error | undefined>();
      },
    });
  });

  it('refuses what is not a logger', () => {
    // @ts-expect-error: missing warn and error
    const partial: Logger = { debug() {}, info() {} };
    // @ts-expect-error: true is not a logger (false silences)
    createMailReceiver({ secret, logger: true });
    // @ts-expect-error: a string is not a logger
    createMailReceiver({ secret, logger: 'pino' });
    void partial;
  });
});

describe('outcome and telemetry', () => {
  it('onOutcome gets a typed record', () => {
    createMailReceiver({
      secret,
      onOutcome: (outcome) => {
        expectTypeOf(outcome).toEqualTypeOf<Outcome>();
        expectTypeOf(outcome.kind).toEqualTypeOf<Verdict['kind']>();
        // @ts-expect-error statuses exist only at the HTTP edge, not in an outcome
        void outcome.status;
        expectTypeOf(outcome.code).toEqualTypeOf<WebhookErrorCode | undefined>();
        expectTypeOf(outcome.mode).toEqualTypeOf<'direct' | 'enqueue' | 'worker'>();
      },
    });
  });

  it('telemetry takes createOtelTelemetry()', () => {
    expectTypeOf(createOtelTelemetry()).toEqualTypeOf<Telemetry>();
    createCrmReceiver({ secret, telemetry: createOtelTelemetry() });
    // @ts-expect-error: not a telemetry
    createCrmReceiver({ secret, telemetry: {} });
  });
});
