import { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import { createSyncQueue } from '../../src/queue/sync-job.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import type { Database } from '../../src/warehouse/tables.js';

/** The many accounts {@link addManyAccounts} registers: their names and how their jobs last ran. */
export interface ManyAccounts {
  names: string[];
  /** Whose last run of jobs failed with a 500 (every 10th). */
  failing: string[];
  /** In state credentials_refused, the last run of each resource failed by that refusal (every 25th). */
  refused: string[];
}

/** What a run of an account whose secret the token service refused records. */
const REFUSED =
  'the token service refused its client secret (401 invalid_client: Client authentication failed)';

/**
 * Registers `count` accounts `bulk001`… at once, as rows copied from the
 * registered account `from` (its credentials, state enabled), the way
 * `status` and the console read an account (no schema of their own: their
 * runs, seeded here in hiresync.data_sync_runs, are what they show), with a
 * last run of each built-in resource: every 10th account's jobs failed with
 * a 500; every 25th account is in state credentials_refused, each of its runs
 * failed by that refusal (one problem: the account's); the others succeeded.
 * Fast: two statements, whatever `count` (registering 200 accounts through
 * the CLI, each migrating its schema, takes minutes).
 */
export async function addManyAccounts(
  db: Kysely<Database>,
  from: string,
  count: number,
): Promise<ManyAccounts> {
  const names = Array.from({ length: count }, (_, i) => `bulk${String(i + 1).padStart(3, '0')}`);
  const refused = names.filter((_, i) => (i + 1) % 25 === 0);
  const failing = names.filter((n, i) => (i + 1) % 10 === 0 && !refused.includes(n));
  await sql`
    insert into hiresync.accounts (name, auth_mode, base_url, auth_url, client_id, secret, state, refusal_reason)
    select b.name, a.auth_mode, a.base_url, a.auth_url, a.client_id, a.secret,
      case when b.name = any(${refused}::text[]) then 'credentials_refused' else 'enabled' end,
      case when b.name = any(${refused}::text[]) then ${REFUSED} end
    from hiresync.accounts a, unnest(${names}::text[]) b(name) where a.name = ${from}`.execute(db);
  // A run of every resource: an account without runs of one and without a schema cannot be read.
  await sql`
    insert into hiresync.data_sync_runs (account, resource, mode, started_at, finished_at, pages, records, outcome, error)
    select b.name, r.resource, 'full', now() - interval '1 hour' + b.n * interval '1 second',
      now() - interval '1 hour' + b.n * interval '1 second' + interval '5 seconds', 2, 40,
      case when (r.resource = 'jobs' and b.name = any(${failing}::text[])) or b.name = any(${refused}::text[])
        then 'failed' else 'succeeded' end,
      case when r.resource = 'jobs' and b.name = any(${failing}::text[])
          then '500 from /v3/jobs: the API failed; try again later'
        when b.name = any(${refused}::text[])
          then 'account ' || b.name || ': ' || ${REFUSED} || ': store the right one with hiresync accounts update ' || b.name
      end
    from unnest(${names}::text[]) with ordinality b(name, n), unnest(${RESOURCE_NAMES}::text[]) r(resource)`.execute(
    db,
  );
  return { names, failing, refused };
}

/**
 * Pauses the sync queue under `prefix` (BullMQ's global pause): the workers
 * take no run from it, so accounts registered while it is paused keep the
 * runs seeded for them (a worker queues the first runs of accounts it finds
 * added within a minute). Resolves to what closes its connection (the queue
 * stays paused: the test's prefix is cleared after it).
 */
export async function holdRuns(redisUrl: string, prefix: string): Promise<() => Promise<void>> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = createSyncQueue(redis, prefix);
  await queue.pause();
  return async () => {
    await queue.close();
    redis.disconnect();
  };
}
