/** The inbox contract's checks of rows: one per delivery, duplicates, quarantine, purge. */
import { ok, rejects, same } from '../store-contract/assert.js';
import type { InboxCheck } from './types.js';

const DAY = 86_400_000;

export const rowChecks: InboxCheck[] = [
  {
    name: 'writes one row per delivery, with its body and the headers that run it again, the signature as received among them',
    async run({ inbox, send }) {
      const a = await send('deal.won', { deal_id: 'd_1' });
      const b = await send('deal.won', { deal_id: 'd_2' });
      same([a.status, b.status], [200, 200], 'answers');
      const { rows } = await inbox.list();
      same(
        rows.map((r) => [r.deliveryId, r.event, r.status, r.orderingKey, r.attempts]),
        [
          [b.deliveryId, 'deal.won', 'received', 'crm:deal:d_2', 0],
          [a.deliveryId, 'deal.won', 'received', 'crm:deal:d_1', 0],
        ],
        'rows, newest first',
      );
      const detail = await inbox.show(rows[1]!.id);
      ok(detail !== undefined, 'show(id) of a listed row');
      const body = JSON.parse(new TextDecoder().decode(detail!.body)) as {
        id?: string;
        data?: { deal_id?: string };
      };
      same([body.id, body.data?.deal_id], [a.deliveryId, 'd_1'], 'the stored body');
      // The worker verifies the service's own signature again over the stored bytes (docs/inbox.md).
      ok(
        Object.entries(detail!.headers).some(
          ([name, value]) => /sig/i.test(name) && value.startsWith('sha256='),
        ),
        'the stored headers hold the signature as received',
        detail!.headers,
      );
      same(await inbox.show(rows[0]!.id + 1_000_000), undefined, 'show of an id with no row');
    },
  },
  {
    name: 'a copy of a delivery finds its row: answered 200, no second row, a handled row not run again',
    async run({ inbox, send, receiver, worker }) {
      let runs = 0;
      receiver.on('deal.won', () => {
        runs++;
      });
      const first = await send('deal.won', { deal_id: 'd_1' });
      const copy = await send('deal.won', { deal_id: 'd_1' }, { deliveryId: first.deliveryId });
      same(copy.status, 200, 'the copy’s answer');
      same((await inbox.list()).rows.length, 1, 'rows after two copies');
      same(await worker().runOnce(), 1, 'rows run');
      const late = await send('deal.won', { deal_id: 'd_1' }, { deliveryId: first.deliveryId });
      same(late.status, 200, 'a copy after the row was handled');
      same(await worker().runOnce(), 0, 'rows run after the late copy');
      same(runs, 1, 'handler runs');
      same(
        (await inbox.list()).rows.map((r) => r.status),
        ['handled'],
        'the one row',
      );
    },
  },
  {
    name: 'quarantines an authentic delivery whose payload fails the schema: 200, the issues without values, never run',
    async run({ inbox, send, receiver, worker }) {
      let runs = 0;
      receiver.on('deal.won', () => {
        runs++;
      });
      const { status } = await send('deal.won', { deal_id: 'd_1', value: 'a-secret-looking-value' });
      same(status, 200, 'the answer to a delivery that fails the schema');
      const [row] = (await inbox.list({ status: 'quarantined' })).rows;
      ok(row !== undefined, 'a quarantined row');
      same(row!.lastErrorCode, 'invalid_payload', 'its code');
      ok(/value/.test(row!.lastErrorMessage ?? ''), 'its message names the path', row!.lastErrorMessage);
      ok(!(row!.lastErrorMessage ?? '').includes('a-secret-looking-value'), 'its message holds no value');
      same(await worker().runOnce(), 0, 'rows run: a quarantined row waits for a re-drive');
      same(runs, 0, 'handler runs');
    },
  },
  {
    name: 'purges handled rows older than the retention (default 90 days), never a pending one',
    async run({ inbox, send, receiver, worker, advance }) {
      receiver.on('deal.won', () => {});
      await send('deal.won', { deal_id: 'd_1' });
      await send('deal.won', { deal_id: 'd_2' });
      await worker().runOnce();
      await send('deal.won', { deal_id: 'd_3' }); // never run
      advance(89 * DAY);
      same(await inbox.purge(), 0, 'purged after 89 days');
      advance(2 * DAY);
      same(await inbox.purge(), 2, 'purged after 91 days');
      same(
        (await inbox.list()).rows.map((r) => r.status),
        ['received'],
        'rows left',
      );
      await rejects(inbox.purge({ olderThanDays: -1 }), 'options_invalid', 'purge with olderThanDays -1');
    },
  },
];
