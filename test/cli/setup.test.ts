/**
 * `svc-webhooks setup nats|sqs` as a subprocess (the built bin, on the oldest supported Node) against
 * nats-server and fauxqs: created, then unchanged; differing settings exit 1 naming the flag that
 * keeps them, nothing changed; `--update` changes them; no server exits 3; a bad flag exits 2.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import type { FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsAvailable, natsForSuite } from '../handoff/nats/support.js';
import { startSqs, uniqueName } from '../handoff/sqs/support.js';
import { freePort } from '../support/server-process.js';
import { buildCli, runCli } from './support/cli.js';

let cli: string;
beforeAll(async () => {
  cli = await buildCli();
}, 180_000);

describe.runIf(natsAvailable())('svc-webhooks setup nats', () => {
  const nats = natsForSuite();

  it('creates the streams, then finds them unchanged; refuses other settings with the flag that keeps them; --update changes them', async () => {
    const names = ['--stream', 'CLI_WORK', '--dead-letter-stream', 'CLI_DEAD', '--subject-prefix', 'cli'];
    const setup = (...args: string[]) =>
      runCli(cli, ['setup', 'nats', '--server', nats.server.url, ...names, ...args]);
    const created = await setup();
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toBe('stream CLI_WORK: created\ndead-letter stream CLI_DEAD: created\n');

    const again = await setup('--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      ok: true,
      stream: { name: 'CLI_WORK', outcome: 'unchanged', changed: [] },
      deadLetterStream: { name: 'CLI_DEAD', outcome: 'unchanged', changed: [] },
    });

    const differing = await setup('--duplicate-window', '10m');
    expect(differing.code).toBe(1);
    expect(differing.stderr).toContain('duplicate_window is 300 s, not 600 s');
    expect(differing.stderr).toContain('To keep what is there, pass --duplicate-window 300000ms.');
    expect(differing.stderr).toContain('add --update');
    const jsm = await jetstreamManager(nats.nc);
    expect((await jsm.streams.info('CLI_WORK')).config.duplicate_window).toBe(300_000_000_000);

    const updated = await setup('--duplicate-window', '10m', '--update');
    expect(updated.code).toBe(0);
    expect(updated.stdout).toBe(
      'stream CLI_WORK: updated (duplicate_window)\ndead-letter stream CLI_DEAD: updated (duplicate_window)\n',
    );
    expect((await jsm.streams.info('CLI_WORK')).config.duplicate_window).toBe(600_000_000_000);
  });

  it('exits 2 for a window the worker refuses and 3 when no server answers', async () => {
    const short = await runCli(cli, [
      'setup',
      'nats',
      '--server',
      nats.server.url,
      '--duplicate-window',
      '2m',
    ]);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('duplicateWindowMs must be a whole number of ms from 180000');
    const nobody = await runCli(cli, ['setup', 'nats', '--server', `nats://127.0.0.1:${await freePort()}`]);
    expect(nobody.code).toBe(3);
    expect(nobody.stderr).toContain('did not answer');
  });
});

describe('svc-webhooks setup sqs', () => {
  let sqs: FauxqsServer;
  beforeAll(async () => {
    sqs = await startSqs();
  });
  afterAll(async () => {
    await sqs?.stop();
  });
  const env = { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_PROFILE: undefined };

  it('creates a FIFO queue and its dead-letter queue, then finds them unchanged; refuses other settings, nothing changed', async () => {
    const queue = `${uniqueName('cli')}.fifo`;
    const setup = (...args: string[]) =>
      runCli(
        cli,
        ['setup', 'sqs', '--queue', queue, '--endpoint', sqs.address, '--region', 'us-east-1', ...args],
        {
          env,
        },
      );
    const created = await setup();
    expect(created.code).toBe(0);
    const dead = queue.replace(/\.fifo$/, '-dead.fifo');
    expect(created.stdout).toMatch(
      new RegExp(
        `^dead-letter queue ${dead}: created  http\\S+/${dead}\\nqueue ${queue}: created  http\\S+/${queue}\\n$`,
      ),
    );

    const again = await setup('--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      ok: true,
      queueUrl: expect.stringMatching(new RegExp(`/${queue}$`)),
      queue: { name: queue, outcome: 'unchanged', changed: [] },
      deadLetterQueue: { name: dead, outcome: 'unchanged', changed: [] },
    });

    const differing = await setup('--visibility-timeout', '30', '--max-receive-count', '5');
    expect(differing.code).toBe(1);
    expect(differing.stderr).toContain('VisibilityTimeout is 60, not 30');
    expect(differing.stderr).toContain(
      'To keep what is there, pass --visibility-timeout 60, --max-receive-count 10.',
    );

    const updated = await setup('--visibility-timeout', '30', '--max-receive-count', '5', '--update');
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain(`queue ${queue}: updated (VisibilityTimeout, RedrivePolicy)`);
  });

  it('exits 2 for a bad flag and 3 when no SQS answers', async () => {
    const bad = await runCli(cli, ['setup', 'sqs', '--queue', 'q', '--visibility-timeout', 'soon'], { env });
    expect(bad.code).toBe(2);
    const nobody = await runCli(
      cli,
      [
        'setup',
        'sqs',
        '--queue',
        'q',
        '--endpoint',
        `http://127.0.0.1:${await freePort()}`,
        '--region',
        'us-east-1',
      ],
      { env },
    );
    expect(nobody.code).toBe(3);
    expect(nobody.stderr).toContain('did not answer');
  });
});
