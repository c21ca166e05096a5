import { Redis } from 'ioredis';
import { loadStatusConfig } from '../config.js';
import { coerceError, HiresyncError } from '../errors.js';
import { checkConnections } from '../preflight.js';
import { redactSecrets } from '../secret.js';
import { readStatus } from '../status.js';
import { createDatabase } from '../warehouse/database.js';
import { defineCommand, EXIT } from './command.js';
import { formatTable } from './format-table.js';
import type { OptionTable } from './options.js';

/** `hiresync status` takes no option but `--help`. */
export const options = {} as const satisfies OptionTable;

/** `hiresync status`: a table of each resource's last run and pending checkpoint. */
export const status = defineCommand({
  name: 'status',
  summary: "show each resource's last run and pending checkpoint",
  description: `Per resource: the last run (mode, started, finished, pages, records, outcome,
    error), the last success, and whether a checkpoint is pending. Needs
    DATABASE_URL and REDIS_URL. Exit 0, or 1 when Postgres or Redis cannot be read.`,
  options,
  async execute(_values, { env, stdout, stderr }) {
    const config = loadStatusConfig(env);
    const db = createDatabase(config.databaseUrl, { max: 2, applicationName: 'hiresync status' });
    // Status reads once: fail fast rather than wait for Redis to come back.
    const redis = new Redis(config.redisUrl, {
      maxRetriesPerRequest: 1,
      connectTimeout: 5000,
      retryStrategy: () => null,
    });
    let redisError: Error | undefined;
    redis.on('error', (error: Error) => {
      redisError = error;
    });
    try {
      await checkConnections(db, redis).catch((error: unknown) => {
        // ioredis reports a refused connection as "Connection is closed"; name the real cause.
        if (redisError && /^cannot reach Redis/.test(coerceError(error).message)) {
          throw new HiresyncError(`cannot reach Redis (${redisError.message}): check REDIS_URL`);
        }
        throw error;
      });
      const rows = (await readStatus(db, redis, config.redisPrefix)).map((s) => {
        const r = s.lastRun;
        return [
          s.resource,
          r?.mode ?? 'never run',
          r?.started_at ?? '-',
          r?.finished_at ?? '-',
          r ? String(r.pages) : '-',
          r ? String(r.records) : '-',
          r?.outcome ?? '-',
          s.lastSuccess?.finished_at ?? '-',
          s.checkpoint
            ? `yes: run ${s.checkpoint.runId}, ${s.checkpoint.pagesDone} pages done`
            : 'no',
          redactSecrets(r?.error ?? ''),
        ];
      });
      stdout.write(
        `${formatTable(['resource', 'last run', 'started', 'finished', 'pages', 'records', 'outcome', 'last success', 'checkpoint pending', 'error'], rows)}\n`,
      );
      return EXIT.ok;
    } catch (error) {
      stderr.write(`hiresync status: ${redactSecrets(coerceError(error).message)}\n`);
      return EXIT.failed;
    } finally {
      await db.destroy();
      redis.disconnect();
    }
  },
});
