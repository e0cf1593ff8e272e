/**
 * Real Redis and PostgreSQL servers for tests, started from the machine's binaries on 127.0.0.1 with
 * free ports and a temporary directory, and removed afterwards. Missing binaries are installed by
 * scripts/ensure-test-servers.sh (apt-get, as root); in CI (`CI=true`) a server that still cannot be
 * started is a failure, never a skip.
 *
 * ```ts
 * const redis = await startRedis();   // redis.url, redis.port
 * await redis.stop();                 // SIGTERM (saves its data), later: await redis.start()
 * redis.pause(); redis.resume();     // SIGSTOP / SIGCONT: a stall, connections stay open
 * await redis.close();                // stop + delete the temp dir
 * const pg = await startPostgres();   // pg.connectionString
 * pg.pause(); pg.resume();            // the same for the server and every backend
 * await pg.restart();                 // immediate shutdown (SIGQUIT), then start on the same port and data
 * await pg.close();
 * ```
 */

export { type PostgresServer, startPostgres } from './postgres-server.js';
export { type RedisServer, type RedisServerOptions, startRedis } from './redis-server.js';
export {
  ensureServers,
  freePort,
  inCI,
  postgresAvailable,
  postgresBinDir,
  redisAvailable,
} from './server-process.js';
