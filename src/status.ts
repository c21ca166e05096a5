import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { schemaOf } from './accounts/account.js';
import { RESOURCE_NAMES, type ResourceName } from './config.js';
import { RedisCheckpointStore } from './queue/redis-checkpoint-store.js';
import { redactSecrets } from './secret.js';
import type { Checkpoint } from './sync/ports.js';
import { inSchema } from './warehouse/database.js';
import type { Database, SyncRun } from './warehouse/schema.js';

export interface ResourceStatus {
  account: string;
  resource: ResourceName;
  lastRun: SyncRun | undefined;
  lastSuccess: SyncRun | undefined;
  checkpoint: Checkpoint | undefined;
}

/**
 * Per account and resource: its last run, its last successful run and its
 * pending checkpoint, if any; errors redacted. `accounts` defaults to
 * `default` alone; each is read from its own schema.
 */
export async function readStatus(
  db: Kysely<Database>,
  redis: Redis,
  prefix: string,
  accounts: readonly string[] = ['default'],
): Promise<ResourceStatus[]> {
  const rows = await Promise.all(
    accounts.map((account) => {
      const checkpoints = new RedisCheckpointStore(redis, prefix, account);
      const schemaDb = inSchema(db, schemaOf(account));
      return Promise.all(
        RESOURCE_NAMES.map(async (resource) => {
          const runs = schemaDb
            .selectFrom('sync_runs')
            .selectAll()
            .where('resource', '=', resource)
            .orderBy('id', 'desc')
            .limit(1);
          const [lastRun, lastSuccess, checkpoint] = await Promise.all([
            runs.executeTakeFirst(),
            runs.where('outcome', '=', 'succeeded').executeTakeFirst(),
            checkpoints.load(resource),
          ]);
          // Rows written before errors were redacted may still hold an echoed credential.
          const clean = (run: SyncRun | undefined) =>
            run?.error ? { ...run, error: redactSecrets(run.error) } : run;
          return {
            account,
            resource,
            lastRun: clean(lastRun),
            lastSuccess: clean(lastSuccess),
            checkpoint,
          };
        }),
      );
    }),
  );
  return rows.flat();
}
