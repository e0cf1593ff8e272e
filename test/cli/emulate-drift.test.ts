/**
 * The emulator sends payload drift (the built bin, as processes): `emulate --new-event` makes both
 * services send an event this version does not know to the webhooks forwarded to a real receiver over
 * HTTP, `trigger --new-event` sends it, and `trigger --set` a field the schema does not know; the
 * receiver names exactly those as drift, never a value.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCrmReceiver, createMailReceiver, type Outcome } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, RUN_LIMIT_MS, type RunningEmulator, runCli, startEmulator } from './support/cli.js';

const MAIL_SECRET = 'whsec_emulate_drift_mail_0123456789';
const CRM_SECRET = 'whsec_emulate_drift_crm_01234567890';

let cli: string;
let server: Server;
let emulator: RunningEmulator | undefined;
const outcomes: Outcome[] = [];

beforeAll(async () => {
  cli = await buildCli();
  const onOutcome = (outcome: Outcome) => void outcomes.push(outcome);
  const mail = createMailReceiver({ secret: MAIL_SECRET, logger: false, onOutcome }).onAny(() => {});
  const crm = createCrmReceiver({ secret: CRM_SECRET, logger: false, onOutcome }).onAny(() => {});
  server = createServer(createNodeListener({ '/webhooks/mail': mail, '/webhooks/crm': crm }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  emulator = await startEmulator(cli, [
    '--no-check',
    '--forward',
    `mail=${url}/webhooks/mail`,
    '--forward',
    `crm=${url}/webhooks/crm`,
    '--secret',
    `mail=${MAIL_SECRET}`,
    '--secret',
    `crm=${CRM_SECRET}`,
    '--new-event',
    'mail=warmed_up',
    '--new-event',
    'crm=deal.reopened',
  ]);
}, RUN_LIMIT_MS);

afterAll(async () => {
  await emulator?.stop();
  await new Promise((resolve) => server?.close(resolve));
});

describe('emulate --new-event and trigger', () => {
  it(
    'sends both services an event this version does not know, and a new field',
    async () => {
      const trigger = (...args: string[]) => runCli(cli, ['trigger', ...args, '--emulator', emulator!.url]);
      for (const args of [
        ['mail', 'warmed_up', '--new-event', '--set', 'level="secret-value"'],
        ['crm', 'deal.reopened', '--new-event', '--set', 'deal_id=d_1'],
        ['mail', 'delivered', '--set', 'tier="secret-value"'],
      ]) {
        const run = await trigger(...args);
        expect(run.code, run.stderr).toBe(0);
      }
      expect(outcomes.map(({ service, event, kind, drift }) => ({ service, event, kind, drift }))).toEqual([
        { service: 'mail', event: 'warmed_up', kind: 'ignored', drift: [''] },
        { service: 'crm', event: 'deal.reopened', kind: 'ignored', drift: [''] },
        { service: 'mail', event: 'delivered', kind: 'handled', drift: ['tier'] },
      ]);
      expect(JSON.stringify(outcomes)).not.toContain('secret-value');
      // An event the emulator was not told of is refused by it, not sent.
      const unnamed = await trigger('mail', 'cooled_down', '--new-event');
      expect(unnamed.code).not.toBe(0);
      expect(outcomes).toHaveLength(3);
    },
    RUN_LIMIT_MS,
  );
});
