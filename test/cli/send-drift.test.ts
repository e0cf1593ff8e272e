/**
 * `svc-webhooks send --set` with a field this version does not know: the built bin signs and sends the
 * drifted payload to a real receiver over HTTP, which accepts it and names the new fields as drift
 * (docs/observability-drift.md "Payload drift"), not their values.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCrmReceiver, createMailReceiver, type LogEntry, type Outcome } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, RUN_LIMIT_MS, runCli } from './support/cli.js';

const MAIL_SECRET = 'whsec_cli_drift_mail_0123456789';
const CRM_SECRET = 'whsec_cli_drift_crm_0123456789';

let cli: string;
let server: Server;
let url: string;
const outcomes: Outcome[] = [];
const logs: LogEntry[] = [];

beforeAll(async () => {
  cli = await buildCli();
  const common = {
    logger: (entry: LogEntry) => void logs.push(entry),
    onOutcome: (outcome: Outcome) => void outcomes.push(outcome),
  };
  const mail = createMailReceiver({ secret: MAIL_SECRET, ...common }).onAny(() => {});
  const crm = createCrmReceiver({ secret: CRM_SECRET, ...common }).onAny(() => {});
  server = createServer(createNodeListener({ '/webhooks/mail': mail, '/webhooks/crm': crm }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, RUN_LIMIT_MS);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

describe('send --set with new fields', () => {
  it(
    'is accepted, and the receiver names exactly the new fields',
    async () => {
      const mail = await runCli(cli, [
        'send',
        'mail',
        'delivered',
        '--url',
        `${url}/webhooks/mail`,
        '--secret',
        MAIL_SECRET,
        '--set',
        'tier=gold-secret-value',
        '--set',
        'routing={"pool":"p1"}',
        '--json',
      ]);
      expect(mail.code, mail.stderr).toBe(0);
      const crm = await runCli(cli, [
        'send',
        'crm',
        'deal.won',
        '--url',
        `${url}/webhooks/crm`,
        '--secret',
        CRM_SECRET,
        '--set',
        'owner=ana',
        '--json',
      ]);
      expect(crm.code, crm.stderr).toBe(0);
      expect(outcomes.map(({ service, event, kind, drift }) => ({ service, event, kind, drift }))).toEqual([
        { service: 'mail', event: 'delivered', kind: 'handled', drift: ['tier', 'routing'] },
        { service: 'crm', event: 'deal.won', kind: 'handled', drift: ['data.owner'] },
      ]);
      expect(logs.filter(({ fields }) => 'path' in fields).map(({ fields }) => fields.path)).toEqual([
        'tier',
        'routing',
        'data.owner',
      ]);
      expect(JSON.stringify(logs)).not.toContain('secret-value');
    },
    RUN_LIMIT_MS,
  );

  it(
    '--new-event sends an event this version does not know, for both services: drift [""]',
    async () => {
      outcomes.length = 0;
      logs.length = 0;
      const send = (service: string, event: string, secret: string, ...rest: string[]) =>
        runCli(cli, [
          'send',
          service,
          event,
          '--new-event',
          '--url',
          `${url}/webhooks/${service}`,
          '--secret',
          secret,
          ...rest,
        ]);
      const mail = await send('mail', 'message.warmed', MAIL_SECRET, '--set', 'level=3');
      expect(mail.code, mail.stderr).toBe(0);
      const crm = await send('crm', 'deal.reopened', CRM_SECRET, '--set', 'deal_id=d_1');
      expect(crm.code, crm.stderr).toBe(0);
      expect(outcomes.map(({ service, event, kind, drift }) => ({ service, event, kind, drift }))).toEqual([
        { service: 'mail', event: 'message.warmed', kind: 'ignored', drift: [''] },
        { service: 'crm', event: 'deal.reopened', kind: 'ignored', drift: [''] },
      ]);
      expect(logs.filter(({ fields }) => 'path' in fields).map(({ message }) => message)).toEqual([
        'webhook event is one this version does not know',
        'webhook event is one this version does not know',
      ]);
      // A known event with the flag, or a name no header carries: usage errors, nothing sent.
      const known = await send('mail', 'delivered', MAIL_SECRET);
      expect(known.code).toBe(2);
      expect(known.stderr).toContain('drop --new-event');
      const spaced = await send('crm', 'deal reopened', CRM_SECRET);
      expect(spaced.code).toBe(2);
      expect(spaced.stderr).toContain('is not an event name');
      expect(outcomes).toHaveLength(2);
    },
    RUN_LIMIT_MS,
  );
});
