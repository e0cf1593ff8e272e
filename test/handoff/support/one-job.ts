/**
 * One CRM delivery through an engine end to end, for the setup tests: a receiver hands it off to
 * `handoff`, a worker started on the engine runs its handler; resolves with the warnings and errors
 * both logged (none expected of a worker on what the setup function created).
 */

import { createCrmReceiver } from '@svc/webhooks';
import type { HandoffRunner, HandoffTarget } from '@svc/webhooks/handoff';
import { CRM_SECRET, crmDelivery } from '../../receivers/support.js';

export async function runOneJob(
  handoff: HandoffTarget,
  startWorker: (receiver: HandoffRunner) => Promise<{ stop(): Promise<void> }>,
): Promise<{ level: string }[]> {
  const entries: { level: string }[] = [];
  const logger = (entry: { level: string }) => void entries.push(entry);
  let resolveHandled: (id: string) => void = () => {};
  const handled = new Promise<string>((resolve) => {
    resolveHandled = resolve;
  });
  const receiver = createCrmReceiver({ secret: CRM_SECRET, logger }).on('deal.won', (event) =>
    resolveHandled(event.deliveryId),
  );
  const worker = await startWorker(receiver);
  const sending = createCrmReceiver({ secret: CRM_SECRET, logger, handoff });
  const delivery = crmDelivery('deal.won');
  const request = new Request('http://127.0.0.1/webhooks/crm', {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
  });
  const answer = await sending.handle(request);
  if (answer.status !== 200)
    throw new Error(`the hand-off answered ${answer.status}: ${await answer.text()}`);
  if ((await handled) !== delivery.deliveryId) throw new Error('another delivery ran');
  await worker.stop();
  return entries.filter((entry) => entry.level === 'warn' || entry.level === 'error');
}
