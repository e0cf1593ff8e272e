// The worked example of docs/testing.md, verbatim: it must keep passing.
import { createMailReceiver } from '@svc/webhooks';
import { createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import { describe, expect, it } from 'vitest';

function setup() {
  const clock = createVirtualClock();
  const handled: string[] = [];
  let healthy = true;
  // The emitter calls this in-process: no network, no ports.
  let receiver: ReturnType<typeof createMailReceiver>;
  const emitter = createMailEmitter({ clock, handler: (request) => receiver.handle(request) });
  const webhook = emitter.createWebhook({ url: 'https://example.com/webhooks/mail', events: ['bounced'] });
  receiver = createMailReceiver({ secret: webhook.secret }).on('bounced', (event) => {
    if (!healthy) throw new Error('database down');
    handled.push(event.payload.to);
  });
  return { clock, emitter, webhook, handled, setHealthy: (value: boolean) => (healthy = value) };
}

describe('bounce handling', () => {
  it('handles a bounce once', async () => {
    const { emitter, handled } = setup();
    const [delivery] = await emitter.emit('bounced', { to: 'ana@example.com' });
    expect(delivery!.status).toBe('succeeded');
    expect(handled).toEqual(['ana@example.com']);
  });

  it('survives an outage: the service retries after 1 and 2 minutes', async () => {
    const { clock, emitter, handled, setHealthy } = setup();
    setHealthy(false);
    const [delivery] = await emitter.emit('bounced', { to: 'bob@example.com' });
    expect(delivery!.nextAttemptAt).not.toBeNull();
    setHealthy(true);
    await clock.advance(60_000); // the second attempt runs, in virtual time
    expect(emitter.getDelivery(delivery!.id).status).toBe('succeeded');
    expect(handled).toEqual(['bob@example.com']);
  });

  it('a resend by the service does not run the handler twice', async () => {
    const { emitter, webhook, handled } = setup();
    const [delivery] = await emitter.emit('bounced');
    const again = await emitter.retryDelivery(webhook.id, delivery!.id); // same X-SvcMAIL-Id
    expect(again.responseBody).toContain('duplicate');
    expect(handled).toHaveLength(1);
  });
});
