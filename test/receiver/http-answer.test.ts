/** The HTTP edge: every verdict's status, headers and body (src/receiver/http-answer.ts). */
import { describe, expect, it } from 'vitest';
import { accepted, failed, refused, type Verdict } from '../../src/core/verdict.js';
import { httpAnswer, toResponse } from '../../src/receiver/http-answer.js';
import { WEBHOOK_ERROR_STATUS, WebhookError, type WebhookErrorCode } from '../../src/shared/errors.js';

describe('httpAnswer', () => {
  it('maps every error code to its 4xx/5xx with a small JSON error body, never 2xx or 3xx', () => {
    for (const code of Object.keys(WEBHOOK_ERROR_STATUS) as WebhookErrorCode[]) {
      const answer = httpAnswer(refused('mail', new WebhookError(code, 'message')));
      expect(answer.status).toBe(WEBHOOK_ERROR_STATUS[code]);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(JSON.parse(answer.body).error.code).toBe(code);
    }
  });

  it('never sends a handler’s or a store’s own text: the pipeline’s wording for its codes', () => {
    const handler = failed('crm', 'handler_failed', new Error('db password is hunter2'));
    expect(httpAnswer(handler).body).not.toContain('hunter2');
    expect(JSON.parse(httpAnswer(handler).body)).toEqual({
      error: {
        code: 'handler_failed',
        message: 'The webhook handler failed; the delivery will run again on retry.',
        doc_url: 'https://svc.github.io/webhooks/errors.html#handler_failed',
      },
    });
    const store = failed(
      'crm',
      'store_unavailable',
      new WebhookError('store_unavailable', 'redis at 10.0.0.7 down'),
    );
    expect(httpAnswer(store).body).not.toContain('10.0.0.7');
    const route = failed(
      'mail',
      'raw_body_unavailable',
      new WebhookError('raw_body_unavailable', 'Parsed before.'),
    );
    expect(JSON.parse(httpAnswer(route).body).error.message).toBe('Parsed before.');
  });

  it('retry-inviting statuses carry Retry-After (the verdict’s, else 1 s); 405 carries Allow', () => {
    const busy = failed('mail', 'delivery_in_progress', undefined, { deliveryId: 'd', event: 'e' }, 6_500);
    expect(httpAnswer(busy).headers).toEqual({ 'content-type': 'application/json', 'retry-after': '7' });
    expect(httpAnswer(failed('mail', 'store_unavailable', undefined)).headers['retry-after']).toBe('1');
    expect(
      httpAnswer(failed('mail', 'handler_failed', new Error('x'))).headers['retry-after'],
    ).toBeUndefined();
    const method = refused('mail', new WebhookError('method_not_allowed', 'POST only.'));
    expect(httpAnswer(method)).toMatchObject({ status: 405, headers: { allow: 'POST' } });
  });

  it('accepted verdicts are 200 with a body that says what happened', async () => {
    const kinds: Verdict['kind'][] = ['handled', 'duplicate', 'ignored', 'queued'];
    const bodies = kinds.map((kind) => httpAnswer(accepted(kind as 'handled', 'mail', 'd', 'e')).body);
    expect(bodies).toEqual([
      '{"ok":true}',
      '{"ok":true,"result":"duplicate"}',
      '{"ok":true,"result":"ignored"}',
      '{"ok":true,"result":"queued"}',
    ]);
    const response = toResponse(failed('crm', 'delivery_in_progress', undefined, {}, 3_000));
    expect(response.status).toBe(409);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toMatchObject({ error: { code: 'delivery_in_progress' } });
  });
});
