/**
 * An optional peer the bin loads only when a command needs it (`pg` for a PostgreSQL inbox, the NATS
 * and SQS clients for `setup`): a variable specifier, so bundlers and the bin never import it
 * otherwise, and a missing one becomes a usage error with the install command.
 */
import { CliError, EXIT } from './exit-codes.js';

/** The module `name` (its default export when it has one), or a {@link CliError}: `need`, and it is not installed. */
export async function loadPeer<T>(name: string, need: string, install = name): Promise<T> {
  try {
    const loaded = (await import(name)) as { default?: T } & T;
    return loaded.default ?? loaded;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new CliError(
      `${need}, and it is not installed.`,
      EXIT.usage,
      'driver_missing',
      `npm install ${install}`,
    );
  }
}
