import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { RESOURCE_NAMES, type ResourceName } from './config.js';
import { RedisCheckpointStore } from './queue/redis-checkpoint-store.js';
import { redactSecrets } from './secret.js';
import type { Checkpoint } from './sync/ports.js';
import type { Database, SyncRun } from './warehouse/schema.js';

export interface ResourceStatus {
  resource: ResourceName;
  lastRun: SyncRun | undefined;
  lastSuccess: SyncRun | undefined;
  checkpoint: Checkpoint | undefined;
}

/** Per resource: its last run, its last successful run and its pending checkpoint, if any; errors redacted. */
export async function readStatus(
  db: Kysely<Database>,
  redis: Redis,
  prefix: string,
): Promise<ResourceStatus[]> {
  const checkpoints = new RedisCheckpointStore(redis, prefix);
  return Promise.all(
    RESOURCE_NAMES.map(async (resource) => {
      const runs = db
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
      return { resource, lastRun: clean(lastRun), lastSuccess: clean(lastSuccess), checkpoint };
    }),
  );
}
