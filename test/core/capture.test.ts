/**
 * The receivers' opt-in capture hook: called with the exact bytes and headers before verification
 * (so a refused delivery is captured too), never with the secret, never changing the answer.
 */
import { createHmac } from 'node:crypto';
import {
  type CapturedDelivery,
  createCrmReceiver,
  createMailReceiver,
  formatCaptureLine,
  isWebhookError,
} from '@svc/webhooks';
import { createSignedRequest } from '@svc/webhooks/testing';
import { describe, expect, it } from 'vitest';

const SECRET = 'whsec_capture_test_secret';
const body = JSON.stringify({
  event: 'opened',
  client_id: 'c',
  message_id: 'm',
  to: 'a@example.com',
  timestamp: '2026-01-01T00:00:00.000Z',
});
const sig = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
const request = (signature: string) =>
  new Request('https://app.example.com/webhooks/mail', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-SvcMAIL-Event': 'opened',
      'X-SvcMAIL-Sig': signature,
      'X-SvcMAIL-Id': 'd_1',
      Cookie: 'session=app-cookie',
    },
    body,
  });

describe('capture hook', () => {
  it('gets the exact bytes and headers of accepted and refused deliveries', async () => {
    const captured: CapturedDelivery[] = [];
    const lines: string[] = [];
    const receiver = createMailReceiver({
      secret: SECRET,
      capture: (d) => {
        captured.push({ ...d, body: d.body.slice() });
        lines.push(formatCaptureLine(d));
      },
    }).on('opened', () => {});
    expect((await receiver.handle(request(sig))).status).toBe(200);
    expect((await receiver.handle(request(`sha256=${'0'.repeat(64)}`))).status).toBe(401);
    expect(captured).toHaveLength(2);
    expect(new TextDecoder().decode(captured[0]!.body)).toBe(body);
    expect(captured[0]!.service).toBe('mail');

    const line = JSON.parse(lines[0]!);
    expect(lines[0]!.endsWith('\n')).toBe(true);
    expect(line).toMatchObject({
      v: 1,
      service: 'mail',
      headers: { 'x-svcmail-sig': sig, 'x-svcmail-id': 'd_1' },
    });
    expect(Buffer.from(line.body, 'base64').toString('utf8')).toBe(body);
    // The app's own credentials are not kept; the secret never appears.
    expect(line.headers).not.toHaveProperty('cookie');
    expect(lines.join('')).not.toContain(SECRET);
  });

  it('a hook that throws is logged and never changes the answer', async () => {
    const logged: string[] = [];
    const receiver = createCrmReceiver({
      secret: SECRET,
      logger: ({ message }) => logged.push(message),
      capture: () => {
        throw new Error('disk full');
      },
    }).on('deal.won', () => {});
    const response = await receiver.handle(
      await createSignedRequest({ service: 'crm', event: 'deal.won', secret: SECRET }),
    );
    expect(response.status).toBe(200);
    expect(logged).toContain('webhook capture hook failed');
  });

  it('a capture that is not a function is refused at creation', () => {
    try {
      createMailReceiver({ secret: SECRET, capture: 'captures.ndjson' as never });
      expect.unreachable();
    } catch (error) {
      expect(isWebhookError(error) && error.code).toBe('options_invalid');
    }
  });
});
