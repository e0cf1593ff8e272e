/**
 * The page's event catalogue and the schema check of an edited payload: every fixture of the
 * catalogue passes the package's own schemas, and a broken one is refused with where and why.
 */
import { CRM_EVENT_NAMES, MAIL_EVENT_NAMES } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import { catalogue, payloadIssues } from '../../src/cli/emulate/catalogue.js';

describe('the catalogue', () => {
  it('lists all 26 events, each with its line from the spec and a fixture the schema accepts', () => {
    const entries = catalogue(() => Date.parse('2026-11-23T10:00:00Z'));
    expect(entries.map((e) => e.name)).toEqual([...MAIL_EVENT_NAMES, ...CRM_EVENT_NAMES]);
    for (const entry of entries) {
      expect(entry.description.length).toBeGreaterThan(10);
      expect(payloadIssues(entry.service, entry.name, entry.payload)).toEqual([]);
    }
  });

  it('names the field and the problem of an invalid payload', () => {
    const [bounced] = catalogue(Date.now).filter((e) => e.name === 'bounced');
    const issues = payloadIssues('mail', 'bounced', { ...(bounced!.payload as object), to: 42 });
    expect(issues).toEqual([{ path: 'to', message: 'Invalid input: expected string, received number' }]);
    expect(
      payloadIssues('mail', 'bounced', { ...(bounced!.payload as object), event: 'opened' })[0]?.path,
    ).toBe('event');
    expect(payloadIssues('crm', 'deal.won', [])).toEqual([
      { path: '(payload)', message: expect.stringContaining('expected object') },
    ]);
    expect(payloadIssues('crm', 'deal.won', {}).length).toBeGreaterThan(1);
  });
});
