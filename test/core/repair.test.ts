/**
 * core/repair.ts at receipt: a delivery the app's `repair` fixes runs as any other (typed event, its
 * outcome marked `repaired`, an info line without values); one it cannot fix is refused as before
 * (400 `invalid_payload`, the correction's issues); a repair that throws is 500 `repair_failed` (the
 * sender retries) and never reaches the handlers; with the inbox such deliveries are kept
 * `quarantined` with their code. The event name, delivery id and the CRM envelope stay those signed.
 */
import {
  type CrmDataOf,
  createCrmReceiver,
  createMailReceiver,
  type LogEntry,
  type MailPayloadOf,
  type Outcome,
} from '@svc/webhooks';
import { createSqliteInbox } from '@svc/webhooks/sqlite';
import { createSignedRequest } from '@svc/webhooks/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteDatabase, uniqueTable } from '../inbox/support.js';

const secret = 'whsec_repair_test_0123456789abcdef';

function mailReceiver(extra: Partial<Parameters<typeof createMailReceiver>[0]> = {}) {
  const logs: LogEntry[] = [];
  const outcomes: Outcome[] = [];
  const handled: MailPayloadOf<'bounced'>[] = [];
  const receiver = createMailReceiver({
    secret,
    logger: (entry) => void logs.push(entry),
    onOutcome: (outcome) => void outcomes.push(outcome),
    repair: {
      bounced: (payload) => {
        if (payload.mta === 'boom') throw new RangeError(`bad ${String(payload.to)}`);
        if (payload.mta === 'not-an-object') return 'postfix' as never;
        return {
          ...(payload as MailPayloadOf<'bounced'>),
          provider: payload.mta as string,
          event: 'delivered' as never,
        };
      },
    },
    ...extra,
  }).on('bounced', (event) => void handled.push(event.payload));
  return { receiver, logs, outcomes, handled };
}

const bounced = (payload: Record<string, unknown>) =>
  createSignedRequest({
    service: 'mail',
    event: 'bounced',
    payload: { provider: undefined, ...payload },
    secret,
  });

describe('repair at receipt', () => {
  it('a delivery the repair fixes is handled, typed, its outcome repaired, logged without values', async () => {
    const { receiver, logs, outcomes, handled } = mailReceiver();
    const response = await receiver.handle(await bounced({ mta: 'postfix', to: 'ana@example.com' }));
    expect(response.status).toBe(200);
    expect(handled.map((p) => [p.provider, p.to, (p as { event?: string }).event])).toEqual([
      ['postfix', 'ana@example.com', 'bounced'], // the body's signed `event` kept, not the repair's
    ]);
    expect(outcomes.map((o) => [o.kind, o.repaired])).toEqual([['handled', true]]);
    const line = logs.find((entry) => entry.message === 'webhook payload repaired by the app');
    expect(line?.level).toBe('info');
    expect(JSON.stringify(logs)).not.toContain('ana@example.com');
  });

  it('a delivery of a valid shape never calls the repair, and its outcome is not marked', async () => {
    const { receiver, outcomes } = mailReceiver();
    expect((await receiver.handle(await bounced({ provider: 'gmail', mta: 'boom' }))).status).toBe(200);
    expect(outcomes[0]?.repaired).toBeUndefined();
  });

  it('still invalid after the repair: 400 invalid_payload with the correction’s issues', async () => {
    const { receiver, handled } = mailReceiver();
    const response = await receiver.handle(await bounced({}));
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('invalid_payload');
    expect(handled).toEqual([]);
  });

  it('a repair that throws, or returns no object: 500 repair_failed, its message not shown, no handler', async () => {
    const { receiver, handled, logs } = mailReceiver();
    for (const mta of ['boom', 'not-an-object']) {
      const response = await receiver.handle(await bounced({ mta, to: 'ana@example.com' }));
      expect(response.status).toBe(500);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('repair_failed');
    }
    expect(handled).toEqual([]);
    expect(JSON.stringify(logs.map((l) => l.message))).not.toContain('ana@example.com');
  });

  it('refuses a repair option that is not an object of functions of known events', () => {
    for (const repair of [() => undefined, { bounced: 'x' }, { bounced_later: () => undefined }])
      expect(() => createMailReceiver({ secret, repair: repair as never })).toThrow(
        expect.objectContaining({ code: 'options_invalid' }),
      );
  });

  it('CRM: the repair gets `data` and the envelope stays the signed one', async () => {
    const seen: [string, number | null][] = [];
    const receiver = createCrmReceiver({
      secret,
      logger: false,
      repair: {
        'deal.won': (data, issues) => {
          expect(issues).toEqual([{ path: ['data', 'value'], code: 'invalid_type' }]);
          return { ...(data as CrmDataOf<'deal.won'>), value: Number(data.value) };
        },
      },
    }).on('deal.won', (event) => void seen.push([event.tenantId, event.data.value]));
    const request = await createSignedRequest({
      service: 'crm',
      event: 'deal.won',
      data: { value: '5000' as never },
      secret,
      tenantId: 'tenant_a',
    });
    expect((await receiver.handle(request)).status).toBe(200);
    expect(seen).toEqual([['tenant_a', 5000]]);
  });
});

describe('repair at receipt, into the inbox', () => {
  const db = sqliteDatabase();
  afterAll(() => db.close());

  it('a fixed delivery is a received row (handled normally); a throwing repair is kept quarantined as repair_failed', async () => {
    const inbox = createSqliteInbox({ path: db.path, table: uniqueTable('receipt') });
    await inbox.migrate();
    const { receiver, outcomes } = mailReceiver({ handoff: inbox });
    expect((await receiver.handle(await bounced({ mta: 'postfix' }))).status).toBe(200);
    expect((await receiver.handle(await bounced({ mta: 'boom' }))).status).toBe(200);
    const { rows } = await inbox.list({ limit: 10 });
    expect(rows.map((row) => [row.status, row.lastErrorCode]).sort()).toEqual([
      ['quarantined', 'repair_failed'],
      ['received', null],
    ]);
    expect(outcomes.map((o) => [o.mode, o.kind, o.repaired])).toEqual([
      ['enqueue', 'queued', true],
      ['enqueue', 'queued', undefined],
    ]);
    await inbox.close();
  });
});
