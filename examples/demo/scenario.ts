/**
 * The demo scenario: both reference emitters on a virtual clock, delivering over real HTTP to the
 * Express receiver. Simulated minutes pass in milliseconds; every line shows the simulated time.
 */
import { createMailClient, createReconciler, type ReconcileReport } from '@svc/webhooks/manage';
import {
  createCrmEmitter,
  createMailApi,
  createMailEmitter,
  createSignedRequest,
  createVirtualClock,
  type EmittedAttempt,
  type EmitterReport,
} from '@svc/webhooks/testing';
import { startHandoffDemoReceiver } from './handoff-receiver.js';
import { type InboxChapterSummary, inboxChapter } from './inbox-chapter.js';
import { startDemoReceiver } from './receiver-app.js';
import { type TracedSpan, traceChapter } from './trace-chapter.js';

export interface DemoSummary {
  rows: {
    service: string;
    deliveries: number;
    attempts: number;
    succeeded: number;
    failed: number;
    handled: number;
    duplicates: number;
    webhook: string;
  }[];
  simulatedMs: number;
  wallMs: number;
  pausedAt: string | null;
  oldSecretStatus: number;
  crmRetryOffsetsMs: number[];
  /** Chapter 8 (hand-off mode), or null when it was skipped (no redis-server binary). */
  handoff: {
    deliveries: number;
    attempts: number;
    succeeded: number;
    failed: number;
    failedRuns: number;
    handled: number;
    webhook: string;
  } | null;
  /** Chapter 9 (one handed-off delivery traced), or null when it was skipped (no redis-server binary). */
  trace: TracedSpan[] | null;
  /** Chapter 10: a crash in the middle of a handler, with the database inbox. */
  inbox: InboxChapterSummary;
  /** Chapter 5: the reconciler's pass after the outage. */
  reconcile: ReconcileReport['counts'] & { reactivated: number; status: ReconcileReport['status'] };
}

const START = Date.parse('2025-06-02T09:00:00.000Z');
const DEMO_API_KEY = 'zm_live_demo_reconciler';

export async function runDemo(print: (line: string) => void = console.log): Promise<DemoSummary> {
  const wallStart = performance.now();
  const clock = createVirtualClock({ start: START });
  const time = (ms = clock.now()): string => new Date(ms).toISOString().slice(11, 23);
  const short = (id: string): string => id.slice(0, 8);
  const handled = { mail: 0, crm: 0 };
  const duplicates = { mail: 0, crm: 0 };
  const crmAttemptTimes: number[] = [];
  let pausedAt: string | null = null;

  const outcome = (attempt: EmittedAttempt): string => {
    if (attempt.statusCode === 0) return `no response (${attempt.error})`;
    const body = attempt.responseBody ?? '';
    const code = /"code":"([a-z_]+)"/.exec(body)?.[1];
    const result = body.includes('duplicate')
      ? 'duplicate'
      : body.includes('"queued"')
        ? 'queued for a worker'
        : attempt.success
          ? 'processed'
          : (code ?? attempt.error);
    return `${attempt.statusCode} ${result}`;
  };
  const onEvent = (event: EmitterReport): void => {
    if (event.type === 'attempt') {
      const { attempt, delivery } = event;
      if (attempt.responseBody?.includes('duplicate')) duplicates[event.service]++;
      if (event.service === 'crm') crmAttemptTimes.push(Date.parse(attempt.attemptedAt));
      const next = delivery.nextAttemptAt ? `, next attempt ${delivery.nextAttemptAt.slice(11, 23)}` : '';
      const kind =
        attempt.kind === 'scheduled'
          ? `attempt ${attempt.attempt}`
          : `${attempt.kind} (attempt ${attempt.attempt})`;
      print(
        `[${time(Date.parse(attempt.attemptedAt))}] ${event.service.padEnd(4)} -> ${delivery.event.padEnd(16)} ${short(delivery.id)}  ${kind}: ${outcome(attempt)}${next}`,
      );
    } else if (event.type === 'webhook_paused') {
      pausedAt = time(event.at);
      print(
        `[${time(event.at)}] mail    webhook PAUSED after ${event.consecutiveFailures} consecutive failed deliveries`,
      );
    } else if (event.type === 'skipped') {
      print(`[${time(event.at)}] ${event.service.padEnd(4)}    ${event.event} not sent: ${event.reason}`);
    }
  };
  const mail = createMailEmitter({ clock, seed: 'demo-mail', allowPrivateNetworks: true, onEvent });
  const crm = createCrmEmitter({ clock, seed: 'demo-crm', allowPrivateNetworks: true, onEvent });

  // The receiver needs the secrets, the webhooks need the receiver's URL: register, then start.
  const mailHook = mail.createWebhook({
    url: 'http://127.0.0.1:1/webhooks/mail',
    events: ['delivered', 'bounced', 'opened'],
    description: 'demo',
  });
  const crmHook = crm.createWebhook({
    name: 'demo',
    url: 'http://127.0.0.1:1/webhooks/crm',
    events: ['contact.created', 'deal.won'],
  });
  const receiver = await startDemoReceiver({
    mailSecret: mailHook.secret,
    crmSecret: crmHook.secret,
    onHandled: (service, name, deliveryId, detail) => {
      handled[service]++;
      print(
        `[${time()}]            receiver ran the ${service} handler: ${name} ${short(deliveryId)} ${detail}`,
      );
    },
  });
  mail.updateWebhook(mailHook.id, { url: `${receiver.url}/webhooks/mail` });
  crm.updateWebhook(crmHook.id, { url: `${receiver.url}/webhooks/crm` });
  const section = (title: string): void => print(`\n== ${title}`);

  try {
    section(`Receiver listening on ${receiver.url} (Express, SQLite dedup store)`);
    section('1. Deliveries handled');
    const [accepted] = await mail.emit('delivered', { message_id: 'msg_1001', to: 'ana@example.com' });
    const [bounce] = await mail.emit('bounced', { message_id: 'msg_1002', to: 'bob@example.com' });
    await crm.emit('contact.created', { email: 'carla@example.com' });

    section('2. A delivery resent by hand (same X-SvcMAIL-Id): deduplicated');
    await mail.retryDelivery(mailHook.id, bounce!.id);

    section(
      '3. `delivered` again for msg_1001 (final confirmation, new delivery id): collapsed by message_id+event',
    );
    await clock.advance(4_000);
    const [confirmed] = await mail.emit('delivered', { message_id: 'msg_1001', to: 'ana@example.com' });
    print(`            ids differ: ${short(accepted!.id)} vs ${short(confirmed!.id)}`);

    section(
      '4. Handler outage: retries at +0 s, +60 s, +120 s; the webhook pauses after 10 failed deliveries',
    );
    receiver.mailOutage = true;
    for (let i = 0; i < 10; i++) {
      await clock.advance(5_000);
      await mail.emit('opened');
    }
    await clock.runAll();
    await clock.advance(60_000);
    await mail.emit('opened'); // not sent: paused

    section(
      '5. Endpoint fixed: a reconciler (createReconciler) compares the delivery log with what the app holds, reactivates the webhook, resends each lost delivery once',
    );
    receiver.mailOutage = false;
    await clock.advance(15 * 60_000);
    // The email service's management API, emulated over the emitter's own delivery log.
    const api = createMailApi(mail, {
      keys: { [DEMO_API_KEY]: { scopes: ['admin'], rateLimitPerMinute: 1_000 } },
    });
    const reconciler = createReconciler({
      client: createMailClient({
        baseUrl: 'https://api.svcmail.test',
        apiKey: DEMO_API_KEY,
        clock,
        fetch: async (input, init) => (await api.handle(new Request(input, init)))!,
      }),
      holder: receiver.holder,
      lock: receiver.store,
      clock,
      everyMs: 10 * 60_000,
      logger: false,
    });
    print(`[${time()}] mail    reconciler pass: the email delivery log against what the app acknowledged`);
    const report = await reconciler.runOnce();
    const { counts } = report;
    print(
      `[${time()}] mail    reconcile ${report.window.from.slice(0, 16).replace('T', ' ')} → ${report.window.to.slice(0, 16).replace('T', ' ')}: ${report.status}; webhook reactivated ${report.reactivated.length}; found missing ${counts.foundMissing}, resent ${counts.resent}, recovered ${counts.recovered}, not recoverable ${counts.notRecoverable}, history gap ${counts.historyGap}`,
    );
    print(`[${time()}] mail    webhook ${mail.getWebhook(mailHook.id).status} again`);
    await mail.emit('opened');

    section('6. CRM retries: at most 3 attempts, 1 s then 2 s apart');
    receiver.crmFailures = 2;
    const crmStart = crmAttemptTimes.length;
    await crm.emit('deal.won', { value: 12_000 });
    await clock.runAll();
    const crmTimes = crmAttemptTimes.slice(crmStart);
    const crmRetryOffsetsMs = crmTimes.map((t) => t - crmTimes[0]!);

    section('7. CRM secret rotation: the old secret stops at once');
    const { secret: newSecret } = crm.rotateSecret(crmHook.id);
    receiver.setCrmSecrets([newSecret, crmHook.secret]);
    print(`[${time()}] crm     secret rotated; receiver accepts [new, old] during the switch`);
    await crm.emit('contact.created');
    receiver.setCrmSecrets([newSecret]);
    const replay = await createSignedRequest({
      service: 'crm',
      event: 'deal.won',
      secret: crmHook.secret,
      now: clock.now(),
    });
    const refused = await fetch(`${receiver.url}/webhooks/crm`, {
      method: 'POST',
      headers: replay.headers,
      body: await replay.text(),
    });
    print(
      `[${time()}] crm     a request signed with the OLD secret: ${refused.status} (receiver knows only the new one)`,
    );
    await crm.emit('deal.won');

    section(
      '8. The same handler outage in hand-off mode (BullMQ on a local redis-server): every delivery acknowledged at once, handled after the fix',
    );
    const handoffHook = mail.createWebhook({
      url: 'http://127.0.0.1:1/webhooks/mail',
      // An event the first webhook does not take, so these deliveries go to the hand-off receiver only.
      events: ['clicked'],
      description: 'demo hand-off',
    });
    let handoffHandled = 0;
    let handoffSummary: DemoSummary['handoff'] = null;
    const handoffReceiver = await startHandoffDemoReceiver({
      mailSecret: handoffHook.secret,
      onHandled: (name, deliveryId, attempt) => {
        handoffHandled++;
        print(
          `[${time()}]            worker ran the mail handler: ${name} ${short(deliveryId)} (job attempt ${attempt})`,
        );
      },
    });
    if ('skipped' in handoffReceiver) {
      print(`            skipped: ${handoffReceiver.skipped}`);
    } else {
      try {
        mail.updateWebhook(handoffHook.id, { url: `${handoffReceiver.url}/webhooks/mail` });
        handoffReceiver.outage = true;
        const ids: string[] = [];
        for (let i = 0; i < 12; i++) {
          await clock.advance(5_000);
          const [delivery] = await mail.emit('clicked');
          ids.push(delivery!.id);
        }
        await clock.runAll();
        const waitFor = async (done: () => boolean) => {
          for (let waited = 0; !done() && waited < 15_000; waited += 20) {
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        };
        await waitFor(() => handoffReceiver.failedRuns >= ids.length);
        const webhook = mail.getWebhook(handoffHook.id).status;
        print(
          `[${time()}] mail    12 deliveries over 60 s, each answered 200 at attempt 1; the handlers failed ${handoffReceiver.failedRuns} runs, retried by the queue; webhook ${webhook}`,
        );
        handoffReceiver.outage = false;
        print(`[${time()}] mail    handlers fixed: the queued jobs run`);
        await waitFor(() => handoffHandled >= ids.length);
        const records = ids.map((id) => mail.getDelivery(id));
        handoffSummary = {
          deliveries: ids.length,
          attempts: records.reduce((n, r) => n + r.attempts.length, 0),
          succeeded: records.filter((r) => r.status === 'succeeded').length,
          failed: records.filter((r) => r.status !== 'succeeded').length,
          failedRuns: handoffReceiver.failedRuns,
          handled: handoffHandled,
          webhook: mail.getWebhook(handoffHook.id).status,
        };
        print(
          `            hand-off: ${handoffSummary.deliveries} deliveries, ${handoffSummary.attempts} attempts, ${handoffSummary.failed} failed, handler runs that completed ${handoffSummary.handled}, webhook ${handoffSummary.webhook}`,
        );
      } finally {
        await handoffReceiver.close();
      }
    }

    section(
      '9. One delivery handed off and traced with OpenTelemetry (SDK, HTTP auto-instrumentation, createOtelTelemetry)',
    );
    const traced = await traceChapter(print);
    if ('skipped' in traced) print(`            skipped: ${traced.skipped}`);

    section(
      '10. A crash in the middle of a handler, with the database inbox (SQLite): the handler writes in the app’s transaction, the process is SIGKILLed before the commit',
    );
    const inbox = await inboxChapter(print, crm, clock, () => time());

    const rows = (['mail', 'crm'] as const).map((service) => {
      const deliveries =
        service === 'mail'
          ? mail.listDeliveries(mailHook.id)
          : crm.listDeliveries(crmHook.id).flatMap((d) => d.attemptLog);
      const ids = new Map<string, boolean>();
      for (const a of deliveries) ids.set(a.deliveryId, (ids.get(a.deliveryId) ?? false) || a.success);
      return {
        service,
        deliveries: ids.size,
        attempts: deliveries.length,
        succeeded: [...ids.values()].filter(Boolean).length,
        failed: [...ids.values()].filter((ok) => !ok).length,
        handled: handled[service],
        duplicates: duplicates[service],
        webhook:
          service === 'mail'
            ? mail.getWebhook(mailHook.id).status
            : crm.getWebhook(crmHook.id).active
              ? 'active'
              : 'inactive',
      };
    });
    const summary: DemoSummary = {
      rows,
      simulatedMs: clock.now() - START,
      wallMs: Math.round(performance.now() - wallStart),
      pausedAt,
      oldSecretStatus: refused.status,
      crmRetryOffsetsMs,
      handoff: handoffSummary,
      trace: 'skipped' in traced ? null : traced,
      inbox,
      reconcile: { ...counts, reactivated: report.reactivated.length, status: report.status },
    };
    section('Summary');
    const header = [
      'service',
      'deliveries',
      'attempts',
      'succeeded',
      'failed',
      'handler runs',
      'duplicates',
      'webhook',
    ];
    const table = [
      header,
      ...rows.map((r) =>
        [r.service, r.deliveries, r.attempts, r.succeeded, r.failed, r.handled, r.duplicates, r.webhook].map(
          String,
        ),
      ),
    ];
    const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    for (const row of table) print(`  ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')}`);
    print(
      `\n  ${(summary.simulatedMs / 60_000).toFixed(1)} simulated minutes in ${summary.wallMs} ms of wall time.`,
    );
    return summary;
  } finally {
    await receiver.close();
  }
}
