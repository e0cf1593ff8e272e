/**
 * `svc-webhooks setup nats|sqs`: `ensureNatsStreams` and `ensureSqsQueues` from the shell, for a
 * deploy script: creates what is missing, leaves what matches, and exits 1 naming each setting of an
 * existing stream or queue that differs (nothing changed) unless `--update`. The NATS and SQS clients
 * are optional peers, loaded only here.
 */
import type { Command } from 'commander';
import { ensureNatsStreams } from '../../handoff/nats/setup.js';
import type { SqsCommands } from '../../handoff/sqs/ensure-queue.js';
import { ensureQueues } from '../../handoff/sqs/setup.js';
import { durationMs } from '../duration.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import { maskUrl } from '../inbox-target.js';
import { loadPeer } from '../load-peer.js';
import type { Output } from '../output.js';
import { runAction, withJson } from '../run-action.js';
import { failure, print } from '../setup-report.js';

interface NatsOptions {
  server?: string;
  stream: string;
  deadLetterStream: string;
  subjectPrefix: string;
  duplicateWindow: string;
  maxAge: string;
  replicas: string;
  update?: boolean;
}

interface SqsOptions {
  queue: string;
  deadLetterQueue?: string;
  endpoint?: string;
  region?: string;
  visibilityTimeout: string;
  maxReceiveCount: string;
  retention: string;
  maxMessageSize: string;
  update?: boolean;
}

function whole(value: string, option: string): number {
  if (!/^\d+$/.test(value.trim())) throw new CliError(`${option} must be a whole number (got "${value}").`);
  return Number(value);
}

interface NatsModules {
  connect(options: Record<string, unknown>): Promise<{ close(): Promise<void> }>;
}

async function setupNats(out: Output, options: NatsOptions): Promise<ExitCode> {
  const server = options.server ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const label = `The NATS server at ${maskUrl(server)}`;
  const settings = {
    stream: options.stream,
    deadLetterStream: options.deadLetterStream,
    subjectPrefix: options.subjectPrefix,
    duplicateWindowMs: durationMs(options.duplicateWindow, '--duplicate-window'),
    maxAgeMs: options.maxAge.trim() === '0' ? 0 : durationMs(options.maxAge, '--max-age'),
    replicas: whole(options.replicas, '--replicas'),
    update: options.update ?? false,
  };
  const needs = 'setup nats needs the NATS client';
  const install = '@nats-io/transport-node @nats-io/jetstream';
  const { connect } = await loadPeer<NatsModules>('@nats-io/transport-node', needs, install);
  const { jetstream } = await loadPeer<{
    jetstream(nc: unknown): Parameters<typeof ensureNatsStreams>[0]['js'];
  }>('@nats-io/jetstream', needs, install);
  const nc = await connect({ servers: server, timeout: 5_000, maxReconnectAttempts: 0 }).catch(
    (error: unknown) => {
      throw failure(error, label);
    },
  );
  try {
    const setup = await ensureNatsStreams({ js: jetstream(nc), ...settings });
    if (out.json) out.result({ ok: true, ...setup });
    else
      print(out, [
        ['stream', setup.stream],
        ['dead-letter stream', setup.deadLetterStream],
      ]);
    return EXIT.ok;
  } catch (error) {
    throw failure(error, label);
  } finally {
    await nc.close().catch(() => {});
  }
}

interface SqsModule extends SqsCommands {
  SQSClient: new (
    config: Record<string, unknown>,
  ) => { send(command: never): Promise<unknown>; destroy(): void };
}

async function setupSqs(out: Output, options: SqsOptions): Promise<ExitCode> {
  const settings = {
    queueName: options.queue,
    ...(options.deadLetterQueue !== undefined ? { deadLetterQueueName: options.deadLetterQueue } : {}),
    visibilityTimeoutSeconds: whole(options.visibilityTimeout, '--visibility-timeout'),
    maxReceiveCount: whole(options.maxReceiveCount, '--max-receive-count'),
    retentionSeconds: Math.round(durationMs(options.retention, '--retention') / 1_000),
    maxMessageBytes: whole(options.maxMessageSize, '--max-message-size'),
    update: options.update ?? false,
  };
  const sdk = await loadPeer<SqsModule>('@aws-sdk/client-sqs', 'setup sqs needs the AWS SDK');
  const client = new sdk.SQSClient({
    ...(options.region ? { region: options.region } : {}),
    // A local SQS (an emulator): every call to it, whatever host its queue URLs name.
    ...(options.endpoint ? { endpoint: options.endpoint, useQueueUrlAsEndpoint: false } : {}),
  });
  const label = options.endpoint ? `SQS at ${maskUrl(options.endpoint)}` : 'SQS';
  try {
    const setup = await ensureQueues(sdk, { client: client as never, ...settings });
    if (out.json) out.result({ ok: true, ...setup });
    else
      print(out, [
        ['dead-letter queue', setup.deadLetterQueue, setup.deadLetterQueueUrl],
        ['queue', setup.queue, setup.queueUrl],
      ]);
    return EXIT.ok;
  } catch (error) {
    throw failure(error, label);
  } finally {
    client.destroy();
  }
}

/** A subcommand's options: flags, description and default, in the order `--help` lists them. */
type Flags = readonly (readonly [
  flags: string,
  description: string,
  fallback?: string | null,
  required?: true,
])[];

const NATS_FLAGS: Flags = [
  ['--server <url>', 'the NATS server (default $NATS_URL, else nats://127.0.0.1:4222)'],
  ['--stream <name>', 'the work stream', 'WEBHOOKS'],
  ['--dead-letter-stream <name>', 'the dead-letter stream', 'WEBHOOKS_DEAD'],
  ['--subject-prefix <prefix>', 'subjects <prefix>.> and <prefix>-dead.>', 'webhooks'],
  ['--duplicate-window <duration>', 'both streams (3m at least)', '5m'],
  ['--max-age <duration>', 'the work stream (0: no limit)', '14d'],
  ['--replicas <n>', 'both streams', '1'],
];

const SQS_FLAGS: Flags = [
  ['--queue <name>', 'the work queue (ending in .fifo: FIFO queues)', null, true],
  ['--dead-letter-queue <name>', 'default <name>-dead (<name>-dead.fifo)'],
  ['--endpoint <url>', 'a local SQS (an emulator); default the SDK’s for the region'],
  ['--region <region>', 'default the SDK’s ($AWS_REGION, the profile)'],
  ['--visibility-timeout <seconds>', 'the work queue', '60'],
  ['--max-receive-count <n>', 'attempts before the dead-letter queue', '10'],
  ['--retention <duration>', 'both queues', '14d'],
  ['--max-message-size <bytes>', 'both queues', '1048576'],
];

/** A `setup` subcommand: its options, then `--update` for what it ensures (`stream`, `queue`), then the action. */
function subcommand(
  command: Command,
  description: string,
  flags: Flags,
  what: string,
  action: (out: Output, options: never) => Promise<ExitCode>,
): Command {
  withJson(command).description(description);
  for (const [flag, text, fallback, required] of flags)
    if (required) command.requiredOption(flag, text);
    else command.option(flag, text, fallback ?? undefined);
  return command
    .option('--update', `change an existing ${what}'s differing settings instead of refusing it`)
    .action(runAction(action as never));
}

/** Registers `setup` and its subcommands. */
export function setupCommand(program: Command): void {
  const setup = program
    .command('setup')
    .description('create the streams or queues a hand-off engine needs; safe at every deploy');
  subcommand(
    setup.command('nats'),
    'the JetStream work and dead-letter streams (ensureNatsStreams)',
    NATS_FLAGS,
    'stream',
    setupNats as never,
  );
  subcommand(
    setup.command('sqs'),
    'the work queue and its dead-letter queue with a redrive policy (ensureSqsQueues)',
    SQS_FLAGS,
    'queue',
    setupSqs as never,
  );
}
