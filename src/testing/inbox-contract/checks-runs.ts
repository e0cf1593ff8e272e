/** The inbox contract's checks of runs: exactly-once effects, fencing, retries to dead, re-drive, ordering. */
import type { InboxWorkerOptions } from '../../inbox/worker.js';
import { ok, rejects, same } from '../store-contract/assert.js';
import type { InboxCheck } from './types.js';

export const runChecks: InboxCheck[] = [
  {
    name: 'exactly-once effects: a failed run’s write rolls back with it; the handled run’s write commits once',
    needsEffects: true,
    async run({ send, receiver, worker, effects, inbox }) {
      const { transactions, write, count } = effects!;
      receiver.on('deal.won', async (event, context) => {
        await write(context.tx as never, event.deliveryId);
        if (context.attempt === 1) throw new Error('downstream timeout');
      });
      const a = await send('deal.won', { deal_id: 'd_1' });
      const b = await send('deal.won', { deal_id: 'd_2' });
      same(
        await worker({ transactions: transactions as InboxWorkerOptions<never>['transactions'] }).runOnce(),
        4,
        'runs',
      );
      same([await count(a.deliveryId), await count(b.deliveryId)], [1, 1], 'business rows per delivery');
      same(
        (await inbox.list({ status: 'handled' })).rows.map((r) => r.attempts),
        [2, 2],
        'attempts of the handled rows',
      );
    },
  },
  {
    name: 'fencing: a run whose lease was taken over cannot complete or fail the row; the takeover’s outcome stands',
    async run({ send, receiver, worker, advance, inbox }) {
      const leaseMs = 1_000;
      let runs = 0;
      let releaseTakeover = (): void => {};
      const takeoverMayEnd = new Promise<void>((resolve) => {
        releaseTakeover = resolve;
      });
      let takeover: Promise<number> | undefined;
      receiver.on('deal.won', async () => {
        runs++;
        if (runs > 1) return takeoverMayEnd;
        // The first run's lease ends while it runs; another worker claims the row (a new fencing
        // token) and is still running when this first run ends successfully.
        advance(leaseMs + 1);
        takeover = worker({ leaseMs }).runOnce();
        for (let i = 0; i < 500 && runs < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        same(runs, 2, 'the takeover is running');
      });
      await send('deal.won', { deal_id: 'd_1' });
      await worker({ leaseMs }).runOnce();
      const [during] = (await inbox.list()).rows;
      same(
        [during?.status, during?.fence],
        ['processing', 2],
        'the row once the first run ended: its completion (fence 1) changed nothing',
      );
      releaseTakeover();
      same(await takeover, 1, 'the takeover’s runs');
      const [row] = (await inbox.list()).rows;
      same(
        [row?.status, row?.fence, row?.attempts, row?.lastErrorCode],
        ['handled', 2, 2, null],
        'the row after both runs (status, fence, attempts, last error)',
      );
    },
  },
  {
    name: 'a failing row is retried after its backoff, dead after maxAttempts with its error; a re-drive runs it again',
    async run({ send, receiver, worker, advance, inbox }) {
      let failing = true;
      let runs = 0;
      receiver.on('deal.won', () => {
        runs++;
        if (failing) throw new Error('downstream refused');
      });
      await send('deal.won', { deal_id: 'd_1' });
      const retrying = worker({ maxAttempts: 3, backoffMs: (attempt) => attempt * 1_000 });
      same(await retrying.runOnce(), 1, 'first run');
      const [failed] = (await inbox.list({ status: 'failed' })).rows;
      same([failed?.attempts, failed?.lastErrorCode], [1, 'handler_failed'], 'after the first run');
      same(await retrying.runOnce(), 0, 'runs before the backoff ends');
      advance(1_000);
      same(await retrying.runOnce(), 1, 'runs once 1 s passed');
      advance(1_999);
      same(await retrying.runOnce(), 0, 'runs before the second backoff (2 s) ends');
      advance(1);
      same(await retrying.runOnce(), 1, 'the third run');
      const [dead] = (await inbox.list({ status: 'dead' })).rows;
      ok(dead !== undefined, 'a dead row after maxAttempts');
      same([dead!.attempts, dead!.lastErrorCode], [3, 'handler_failed'], 'the dead row');
      ok(
        (dead!.lastErrorMessage ?? '').includes('downstream refused'),
        'its message',
        dead!.lastErrorMessage,
      );

      failing = false;
      same(await inbox.redrive({ id: dead!.id }), 1, 're-driven rows');
      same(await retrying.runOnce(), 1, 'runs after the re-drive');
      same(runs, 4, 'handler runs');
      same((await inbox.list({ status: 'handled' })).rows.length, 1, 'handled rows');
      same(await inbox.redrive({ id: dead!.id }), 0, 're-drive of a handled row');
      await rejects(inbox.redrive({ status: 'handled' }), 'options_invalid', 're-drive by status handled');
    },
  },
  {
    name: 'runs the rows of one ordering key in event-timestamp order; an older event arriving after a newer one was handled is superseded',
    async run({ send, receiver, worker, now, inbox }) {
      const applied: string[] = [];
      receiver.on('deal.created', () => {
        applied.push('created');
      });
      receiver.on('deal.stage_changed', (event) => {
        applied.push(`stage:${event.data.stage_id}`);
      });
      receiver.on('deal.won', () => {
        applied.push('won');
      });
      const t = now() - 60_000;
      const deal = { deal_id: 'deal_7', title: 'Fleet renewal' };
      // Received newest first: the worker must still apply them oldest first.
      await send('deal.won', { ...deal, value: 1_000 }, { at: t + 300 });
      await send('deal.stage_changed', { ...deal, stage_id: 's2' }, { at: t + 200 });
      await send('deal.stage_changed', { ...deal, stage_id: 's1' }, { at: t + 100 });
      await send('deal.created', { ...deal, stage_id: 'new', value: 1_000, contact_id: 'c_1' }, { at: t });
      same(await worker({ concurrency: 4 }).runOnce(), 4, 'rows run');
      same(applied, ['created', 'stage:s1', 'stage:s2', 'won'], 'applied in timestamp order');

      const late = await send('deal.stage_changed', { ...deal, stage_id: 's3' }, { at: t + 250 });
      same(await worker().runOnce(), 1, 'the late row is claimed once');
      same(applied.length, 4, 'the late, older event never runs');
      const [superseded] = (await inbox.list({ status: 'superseded' })).rows;
      same(
        [superseded?.deliveryId, superseded?.orderingKey],
        [late.deliveryId, 'crm:deal:deal_7'],
        'the superseded row',
      );
      same(await inbox.redrive({ status: 'superseded' }), 1, 'a superseded row can be re-driven');
    },
  },
];
