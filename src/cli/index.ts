#!/usr/bin/env node
/**
 * @module
 * `svc-webhooks`: send signed test deliveries, verify and replay captured ones, emulate both
 * services locally, recover failed deliveries, reconcile on a schedule, look at the database inbox,
 * create a hand-off engine's streams or queues, publish the event schemas. docs/cli.md describes every command.
 */
import { Command, type CommanderError } from 'commander';
import { emulateCommand } from './commands/emulate.js';
import { eventsCommand } from './commands/events.js';
import { fixturesCommand } from './commands/fixtures.js';
import { inboxCommand } from './commands/inbox.js';
import { reconcileCommand } from './commands/reconcile.js';
import { recoverCommand } from './commands/recover.js';
import { replayCommand } from './commands/replay.js';
import { schemasCommand } from './commands/schemas.js';
import { sendCommand } from './commands/send.js';
import { setupCommand } from './commands/setup.js';
import { triggerCommand } from './commands/trigger.js';
import { verifyCommand } from './commands/verify.js';
import { EXIT } from './exit-codes.js';

declare const __CLI_VERSION__: string;

// A reader that stops early (`svc-webhooks events | head`) closes the pipe: the rest of the output has
// no one to read it, which is the ordinary end of a command in a pipeline, not a crash with a stack.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    throw error;
  });
}

const program = new Command('svc-webhooks')
  .description(
    "The email and CRM services' webhooks from the shell: send, verify, replay, emulate, recover, reconcile, inbox, set up hand-off engines, list events, publish the schemas.",
  )
  .version(typeof __CLI_VERSION__ === 'string' ? __CLI_VERSION__ : '0.0.0')
  .showHelpAfterError('(add --help for usage)');

// Usage errors (unknown option, missing argument) exit 2 like every other bad input; --help exits 0.
const exit = (error: CommanderError): never => process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.usage);
program.exitOverride(exit);

eventsCommand(program);
fixturesCommand(program);
sendCommand(program);
verifyCommand(program);
replayCommand(program);
emulateCommand(program);
triggerCommand(program);
recoverCommand(program);
reconcileCommand(program);
inboxCommand(program);
schemasCommand(program);
setupCommand(program);

for (const command of program.commands) command.exitOverride(exit);

await program.parseAsync(process.argv);
