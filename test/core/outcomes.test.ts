import { describe, expect, it } from 'vitest';
import { acknowledged, failure, methodNotAllowed, toResponse } from '../../src/core/outcomes.js';
import { WEBHOOK_ERROR_STATUS, WebhookError, type WebhookErrorCode } from '../../src/shared/errors.js';

describe('outcomes', () => {
  it('maps every error code to a 4xx/5xx with a small JSON error body, never 2xx or 3xx', () => {
    for (const code of Object.keys(WEBHOOK_ERROR_STATUS) as WebhookErrorCode[]) {
      const outcome = failure({ code, message: 'message' });
      expect(outcome.status).toBe(WEBHOOK_ERROR_STATUS[code]);
      expect(outcome.status).toBeGreaterThanOrEqual(400);
      expect(JSON.parse(outcome.body!)).toEqual({ error: { code, message: 'message' } });
    }
    expect(failure(new WebhookError('internal_error', 'x', { status: 302 })).status).toBe(500);
    expect(failure(new WebhookError('internal_error', 'x', { status: 204 })).status).toBe(500);
  });

  it('results: rejected (4xx), in_progress (409), unavailable / failed (5xx)', () => {
    expect(failure('method_not_allowed').result).toBe('rejected');
    expect(failure('delivery_in_progress').result).toBe('in_progress');
    expect(failure('store_unavailable').result).toBe('unavailable');
    expect(failure('handler_failed').result).toBe('failed');
    expect(failure('handler_timeout').result).toBe('failed');
  });

  it('retry-inviting statuses carry Retry-After; others do not', () => {
    expect(
      failure('delivery_in_progress', { deliveryId: 'd', event: 'e', retryAfterSeconds: 7 }).headers,
    ).toEqual({
      'content-type': 'application/json',
      'retry-after': '7',
    });
    expect(failure('store_unavailable').headers['retry-after']).toBe('1');
    expect(failure('handler_failed').headers['retry-after']).toBeUndefined();
    expect(methodNotAllowed().headers).toEqual({ 'content-type': 'application/json', allow: 'POST' });
  });

  it('2xx bodies say what happened; toResponse carries status, headers and body', async () => {
    expect(acknowledged('processed', 'd', 'e').body).toBe('{"ok":true}');
    expect(JSON.parse(acknowledged('duplicate', 'd', 'e').body!)).toEqual({ ok: true, result: 'duplicate' });
    const response = toResponse(
      failure('delivery_in_progress', { deliveryId: 'd', event: 'e', retryAfterSeconds: 3 }),
    );
    expect(response.status).toBe(409);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toMatchObject({ error: { code: 'delivery_in_progress' } });
  });
});
