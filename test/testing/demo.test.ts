import { describe, expect, it } from 'vitest';
import { runDemo } from '../../examples/demo/scenario.js';
import { redisAvailable } from '../support/servers.js';

describe('the demo scenario (npm run demo)', () => {
  it('plays the whole timeline over real HTTP and ends with the expected summary', async () => {
    const lines: string[] = [];
    const summary = await runDemo((line) => lines.push(line));
    const text = lines.join('\n');
    expect(summary.rows).toEqual([
      {
        service: 'mail',
        deliveries: 14,
        attempts: 45,
        succeeded: 14,
        failed: 0,
        handled: 13,
        duplicates: 2,
        webhook: 'active',
      },
      {
        service: 'crm',
        deliveries: 4,
        attempts: 6,
        succeeded: 4,
        failed: 0,
        handled: 4,
        duplicates: 0,
        webhook: 'active',
      },
    ]);
    expect(summary.pausedAt).toBe('09:02:54.000');
    // Chapter 5: the 10 deliveries the outage lost, found in the delivery log, resent once each after
    // the webhook was reactivated, and handled (each handled once: 13 handler runs above).
    expect(summary.reconcile).toEqual({
      status: 'done',
      reactivated: 1,
      foundMissing: 10,
      resent: 10,
      recovered: 10,
      notRecoverable: 0,
      historyGap: 0,
    });
    expect(text).toMatch(
      /reconcile .*: done; webhook reactivated 1; found missing 10, resent 10, recovered 10/,
    );
    expect(summary.crmRetryOffsetsMs).toEqual([0, 1_000, 3_000]);
    expect(summary.oldSecretStatus).toBe(401);
    expect(summary.simulatedMs).toBeGreaterThan(15 * 60_000);
    expect(text).toContain('retry (attempt 2): 200 duplicate');
    expect(text).toContain('opened not sent: webhook paused');
    expect(text).toMatch(/attempt 2: 500 handler_failed, next attempt 09:02:09\.000/);
    expect(text).toContain('== Summary');
    // Chapter 10: a real process SIGKILLed after its handler's write, before the commit; the CRM
    // service retries the delivery it sent meanwhile; each deal has exactly one business row.
    expect(summary.inbox).toEqual({
      businessRows: { deal_42: 1, deal_43: 1 },
      rows: [
        { deal: 'deal_42', status: 'handled', attempts: 2 },
        { deal: 'deal_43', status: 'handled', attempts: 1 },
      ],
      killedBeforeCommit: true,
      refusedWhileDown: true,
      retry: { attempts: 2, status: 200 },
    });
    expect(text).toContain('SIGKILL before the commit: deals rows for deal_42: 0');
    // Chapter 8: the same outage in hand-off mode (needs the machine's redis-server).
    if (redisAvailable()) {
      expect(summary.handoff).toMatchObject({
        deliveries: 12,
        attempts: 12,
        succeeded: 12,
        failed: 0,
        handled: 12,
        webhook: 'active',
      });
      expect(summary.handoff!.failedRuns).toBeGreaterThanOrEqual(12);
      expect(text).toContain('attempt 1: 200 queued for a worker');
      // Chapter 9: one handed-off delivery's trace, from the real SDK, across the job to the worker.
      expect(summary.trace?.map(({ name, kind, parent, links }) => ({ name, kind, parent, links }))).toEqual([
        { name: 'POST', kind: 'SERVER', parent: null, links: [] },
        { name: 'send clicked', kind: 'PRODUCER', parent: 'POST', links: [] },
        { name: 'process clicked', kind: 'CONSUMER', parent: 'send clicked', links: ['send clicked'] },
        { name: 'update click stats', kind: 'INTERNAL', parent: 'process clicked', links: [] },
      ]);
      expect(summary.trace).toHaveLength(4);
      expect(text).toMatch(
        /└─ process clicked +CONSUMER +[\d.]+ ms {2}verdict handled, linked to send clicked/,
      );
    }
  });
});
