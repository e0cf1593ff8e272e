// The worked examples of docs/testing.md, verbatim: they must keep passing, and the last test checks
// that the page still shows exactly this code.
import { readFileSync } from 'node:fs';
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

describe('a slow handler in virtual time', () => {
  it('a slow handler: 503 at the 9 s deadline, and its late success still counts', async () => {
    const clock = createVirtualClock();
    let receiver: ReturnType<typeof createMailReceiver>;
    const emitter = createMailEmitter({ clock, handler: (request) => receiver.handle(request) });
    const webhook = emitter.createWebhook({ url: 'https://example.com/webhooks/mail', events: ['bounced'] });
    let handled = 0;
    // The same clock for the receiver: its deadline is a virtual timer too.
    receiver = createMailReceiver({ secret: webhook.secret, clock }).on('bounced', async () => {
      await clock.sleep(12_000); // a 12 s downstream call, in virtual time
      handled++;
    });

    const sending = emitter.emit('bounced'); // the first attempt waits on the handler…
    await clock.advance(9_000); // …until the receiver's deadline
    const [delivery] = await sending;
    expect(delivery!.attempts[0]).toMatchObject({ statusCode: 503, success: false });
    expect(delivery!.attempts[0]!.responseBody).toContain('handler_timeout');

    await clock.runAll(); // the handler ends at 12 s; the retry at +60 s finds the delivery done
    expect(emitter.getDelivery(delivery!.id).status).toBe('succeeded');
    expect(emitter.getDelivery(delivery!.id).attempts[1]!.responseBody).toContain('duplicate');
    expect(handled).toBe(1);
  });
});

describe('docs/testing.md shows the code tested here', () => {
  // Statements of each ```ts block, without imports and indentation, must appear in this file in order.
  const statements = (code: string): string[] =>
    code
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('import '));
  const page = readFileSync(new URL('../../docs/testing.md', import.meta.url), 'utf8');
  const self = statements(readFileSync(new URL(import.meta.url), 'utf8')).join('\n');

  it.each(['## A worked example (vitest)', '## A slow handler in virtual time'])('%s', (heading) => {
    const section = page.slice(page.indexOf(heading));
    const block = /```ts\n([\s\S]*?)\n```/.exec(section)?.[1];
    expect(block, `no ts block under ${heading}`).toBeDefined();
    const wrapped = statements(block!);
    // The slow-handler block is a bare it(...); here it sits inside a describe.
    expect(self).toContain(wrapped.join('\n'));
  });
});
