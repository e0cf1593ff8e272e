/**
 * `--receiver <module>` of `svc-webhooks inbox redrive` and `inbox serve`: the app's own receiver (its
 * secret, schemas and `repair`), loaded from a module the app writes, so a quarantined row is checked
 * as the app's worker will run it (docs/inbox.md "When the payload changes"). The module is imported
 * as it is: `.js` or `.mjs` (ESM) on every supported Node, `.cjs`, and `.ts` on a Node that strips
 * types (22.18 and later, erasable syntax only).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { HandoffRunner } from '../handoff/job/types.js';
import { CliError, EXIT } from './exit-codes.js';

/** Loaded receivers, and the modules' `close` functions (called once the command is done). */
export interface LoadedReceivers {
  receivers: HandoffRunner[];
  close(): Promise<void>;
}

const isReceiver = (value: unknown): value is HandoffRunner =>
  typeof (value as Partial<HandoffRunner> | null)?.runJob === 'function' &&
  typeof (value as Partial<HandoffRunner>).service === 'string';

/** The receivers a module exports: `receiver`, `receivers` (an array) or the default export. */
function receiversOf(loaded: Record<string, unknown>): HandoffRunner[] {
  const found = [
    loaded.receiver,
    loaded.default,
    ...(Array.isArray(loaded.receivers) ? loaded.receivers : []),
  ];
  return found.filter(isReceiver);
}

/** Imports each module of `paths`; a {@link CliError} for one that does not load or exports no receiver. */
export async function loadReceivers(paths: readonly string[]): Promise<LoadedReceivers> {
  const receivers: HandoffRunner[] = [];
  const closers: (() => unknown)[] = [];
  for (const path of paths) {
    let loaded: Record<string, unknown>;
    try {
      loaded = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new CliError(
        `--receiver ${path} could not be loaded (${reason}).`,
        EXIT.usage,
        'receiver_unloadable',
        path.endsWith('.ts')
          ? 'A .ts module needs a Node that strips types (22.18 or later); on an older Node, compile it to .js or .mjs.'
          : 'Pass the path of a module that exports your receiver: export const receiver = createMailReceiver({ … }).',
      );
    }
    const found = receiversOf(loaded);
    if (found.length === 0)
      throw new CliError(
        `--receiver ${path} exports no receiver.`,
        EXIT.usage,
        'receiver_missing',
        'Export it as `receiver` (or `receivers`, or the default export): export const receiver = createMailReceiver({ secret, repair }).',
      );
    receivers.push(...new Set(found));
    if (typeof loaded.close === 'function') closers.push(loaded.close as () => unknown);
  }
  const services = receivers.map((r) => r.service);
  const twice = services.find((service, i) => services.indexOf(service) !== i);
  if (twice !== undefined)
    throw new CliError(`Two receivers of ${twice}: pass one per service.`, EXIT.usage, 'usage');
  return {
    receivers,
    close: async () => {
      for (const close of closers) await close();
    },
  };
}
