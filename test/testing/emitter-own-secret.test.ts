/**
 * A webhook created with a secret of its own (the emulator's `--forward` with the app's secret):
 * deliveries are signed with it, reads mask it, and a secret no receiver accepts is refused.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCrmEmitter, createMailEmitter, createVirtualClock } from '../../src/testing/index.js';

const OWN = 'whsec_the_apps_own_secret_0123456789';
const hmac = (body: string): string => `sha256=${createHmac('sha256', OWN).update(body).digest('hex')}`;

describe('createWebhook with a secret of its own', () => {
  it('email: signs with it and masks it on reads', async () => {
    const received: Array<{ sig: string | null; body: string }> = [];
    const emitter = createMailEmitter({
      clock: createVirtualClock(),
      handler: async (request) => {
        received.push({ sig: request.headers.get('x-svcmail-sig'), body: await request.text() });
        return new Response(null, { status: 200 });
      },
    });
    const created = emitter.createWebhook({
      url: 'https://hooks.example.com/m',
      events: ['bounced'],
      secret: OWN,
    });
    expect(created.secret).toBe(OWN);
    expect(emitter.getWebhook(created.id).secret).toBe('whsec_********6789');
    await emitter.emit('bounced');
    expect(received[0]!.sig).toBe(hmac(received[0]!.body));
  });

  it('CRM: signs with it', async () => {
    const received: Array<{ sig: string | null; body: string }> = [];
    const emitter = createCrmEmitter({
      clock: createVirtualClock(),
      handler: async (request) => {
        received.push({ sig: request.headers.get('x-svc-signature'), body: await request.text() });
        return new Response(null, { status: 200 });
      },
    });
    emitter.createWebhook({
      name: 'app',
      url: 'https://hooks.example.com/c',
      events: ['deal.won'],
      secret: OWN,
    });
    await emitter.emit('deal.won');
    expect(received[0]!.sig).toBe(hmac(received[0]!.body));
  });

  it.each([
    ['short_secret', 'shorter than 16 characters'],
    [`${OWN}\n`, 'leading or trailing whitespace'],
    [42, 'secret must be a string'],
  ])('refuses %j with invalid_payload, naming the problem, never the secret', (secret, reason) => {
    const emitter = createMailEmitter({ clock: createVirtualClock() });
    let caught: unknown;
    try {
      emitter.createWebhook({
        url: 'https://hooks.example.com/m',
        events: ['bounced'],
        secret: secret as string,
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'invalid_payload', status: 400 });
    expect((caught as Error).message).toContain(reason);
    if (typeof secret === 'string') expect((caught as Error).message).not.toContain(secret.trim());
    expect(emitter.listWebhooks()).toHaveLength(0);
  });
});
