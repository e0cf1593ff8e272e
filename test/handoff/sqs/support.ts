/**
 * Shared setup of the SQS hand-off tests: fauxqs (an SQS emulator speaking SQS's own protocol) on
 * 127.0.0.1 port 0, in this process or, where pausing or killing the engine is the point, in a child
 * process (fixtures/fauxqs-process.ts); queues with a redrive policy; an SQSClient pointed at it.
 * fauxqs 1.9.2: the 2.x line needs Node ≥ 22 and CI runs Node 20.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SQSClient } from '@aws-sdk/client-sqs';
import { type FauxqsServer, startFauxqs } from 'fauxqs';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const FAUXQS_PROCESS = fileURLToPath(new URL('./fixtures/fauxqs-process.ts', import.meta.url));

/** The fauxqs version the suites run on, printed once by each suite. */
export const FAUXQS_VERSION = '1.9.2';

/** An SQSClient for the emulator at `endpoint` (no credentials of anyone's: the emulator checks none). */
export function sqsClient(endpoint: string): SQSClient {
  return new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    // fauxqs's queue URLs name sqs.us-east-1.localhost: send every call to the endpoint instead.
    useQueueUrlAsEndpoint: false,
    maxAttempts: 1,
  });
}

let sequence = 0;
/** A queue name unique to this test process. */
export const uniqueName = (prefix: string) => `${prefix}-${process.pid}-${++sequence}`;

/** Queue attributes of a work queue: redrive to `deadLetterArn` after `maxReceiveCount` receives. */
export function workQueueAttributes(
  deadLetterArn: string,
  { maxReceiveCount = 5, visibilityTimeout = 30, fifo = false } = {},
): Record<string, string> {
  return {
    VisibilityTimeout: String(visibilityTimeout),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: deadLetterArn,
      maxReceiveCount: String(maxReceiveCount),
    }),
    ...(fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' } : {}),
  };
}

/** A work queue and its dead-letter queue on `server`. */
export function createQueues(
  server: Pick<FauxqsServer, 'createQueue'>,
  options: { fifo?: boolean; maxReceiveCount?: number; visibilityTimeout?: number } = {},
) {
  const suffix = options.fifo ? '.fifo' : '';
  const dead = server.createQueue(`${uniqueName('dead')}${suffix}`, {
    attributes: options.fifo ? { FifoQueue: 'true' } : {},
  });
  const work = server.createQueue(`${uniqueName('work')}${suffix}`, {
    attributes: workQueueAttributes(dead.queueArn, options),
  });
  return { queueUrl: work.queueUrl, queueName: work.queueName, deadLetterQueueUrl: dead.queueUrl };
}

/** fauxqs in this process on 127.0.0.1, a free port. */
export async function startSqs(): Promise<FauxqsServer> {
  return startFauxqs({ port: 0, host: 'localhost', logger: false });
}

/** fauxqs in a child process, for SIGSTOP and SIGKILL; `address` is its endpoint. */
export interface SqsProcess {
  child: ChildProcess;
  address: string;
  port: number;
  exited: Promise<unknown>;
}

/** Starts fauxqs in a child process on `port` (0: a free one) and resolves once it listens. */
export function spawnSqs(port = 0): Promise<SqsProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', FAUXQS_PROCESS], {
    cwd: ROOT,
    env: { ...process.env, FAUXQS_TEST_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    let out = '';
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      errors += chunk.toString();
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\d+)/.exec(out);
      if (match) {
        const listening = Number(match[1]);
        resolve({ child, address: `http://127.0.0.1:${listening}`, port: listening, exited });
      }
    });
    void exited.then(() => reject(new Error(`fauxqs exited: ${errors}`)));
    setTimeout(() => reject(new Error(`fauxqs not listening within 30 s: ${errors}`)), 30_000).unref();
  });
}
