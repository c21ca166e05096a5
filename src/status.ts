import type { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import { schemaOf } from './account-name.js';
import type { ResourceName } from './config.js';
import { RedisCheckpointStore } from './queue/redis-checkpoint-store.js';
import { RESOURCE_NAMES } from './resources/index.js';
import { redactSecrets } from './secret.js';
import type { Checkpoint } from './sync/ports.js';
import { inSchema } from './warehouse/database.js';
import type { Database, SyncRun } from './warehouse/schema.js';

export interface ResourceStatus {
  account: string;
  resource: ResourceName;
  lastRun: SyncRun | undefined;
  lastSuccess: SyncRun | undefined;
  /** Its last run that finished, when the last run is in flight (else the last run is). */
  lastFinished?: SyncRun | undefined;
  checkpoint: Checkpoint | undefined;
  /** Why the account's runs could not be read (its schema is missing), if so. */
  problem?: string;
}

/**
 * Per account and resource (the built-in ones, and any other the account has
 * runs of): its last run, its last successful run and its pending checkpoint,
 * if any; errors redacted. `accounts` defaults to
 * `default` alone; each is read from its own schema. An account with
 * resources of its own (`own`, its settings) shows those instead of the
 * built-in ones, then any other it has runs of.
 */
export async function readStatus(
  db: Kysely<Database>,
  redis: Redis,
  prefix: string,
  accounts: readonly string[] = ['default'],
  own: ReadonlyMap<string, readonly ResourceName[]> = new Map(),
): Promise<ResourceStatus[]> {
  const rows = await Promise.all(
    accounts.map(async (account) => {
      const checkpoints = new RedisCheckpointStore(redis, prefix, account);
      const schemaDb = inSchema(db, schemaOf(account));
      const resources = await resourcesOf(schemaDb, own.get(account));
      return Promise.all(
        resources.map(async (resource): Promise<ResourceStatus> => {
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
          ]).catch((error: unknown) => {
            // One account whose schema is missing (an add that could not
            // migrate it) must not hide the others'.
            if ((error as { code?: string }).code !== '42P01') throw error;
            return [undefined, undefined, undefined] as const;
          });
          if (lastRun === undefined && lastSuccess === undefined && checkpoint === undefined) {
            const exists = await schemaHasRuns(schemaDb);
            if (!exists) {
              return {
                account,
                resource,
                lastRun,
                lastSuccess,
                checkpoint,
                problem: `schema ${schemaOf(account)} has no hiresync tables: run 'hiresync migrate'`,
              };
            }
          }
          // A run in flight has no outcome yet: the one before it still stands.
          const lastFinished =
            lastRun?.outcome === 'running'
              ? await runs.where('outcome', '<>', 'running').executeTakeFirst()
              : undefined;
          // Rows written before errors were redacted may still hold an echoed credential.
          const clean = (run: SyncRun | undefined) =>
            run?.error ? { ...run, error: redactSecrets(run.error) } : run;
          return {
            account,
            resource,
            lastRun: clean(lastRun),
            lastSuccess: clean(lastSuccess),
            ...(lastFinished ? { lastFinished: clean(lastFinished) } : {}),
            checkpoint,
          };
        }),
      );
    }),
  );
  return rows.flat();
}

/**
 * The built-in resources (or `own`, an account's own), then every other
 * resource the schema has runs of (list resources named in
 * HIRESYNC_RESOURCES, or once synced), sorted.
 */
async function resourcesOf(
  db: Kysely<Database>,
  own: readonly ResourceName[] = RESOURCE_NAMES,
): Promise<ResourceName[]> {
  try {
    const rows = await db.selectFrom('sync_runs').select('resource').distinct().execute();
    const others = rows.map((r) => r.resource).filter((r) => !own.includes(r));
    return [...own, ...others.sort()];
  } catch (error) {
    if ((error as { code?: string }).code !== '42P01') throw error;
    return [...own];
  }
}

/**
 * Whether `default` is an account to show: the environment sets its
 * credentials (`configured`), or its schema (public) holds runs of it (a
 * deployment whose worker has them, read from a shell that does not).
 */
export async function defaultAccountShown(
  db: Kysely<Database>,
  configured: boolean,
): Promise<boolean> {
  if (configured) return true;
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('public.sync_runs') is not null as present`.execute(db);
  if (!found[0]?.present) return false;
  const { rows } = await sql<{ ran: boolean }>`
    select exists (select 1 from public.sync_runs) as ran`.execute(db);
  return rows[0]?.ran === true;
}

/** Whether the instance's schema holds sync_runs. */
async function schemaHasRuns(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    select to_regclass('sync_runs') is not null as found`.execute(db);
  return rows[0]?.found === true;
}

/** A typed view whose rebuild objects of others block (hiresync.typed_view_blocks). */
export interface TypedViewBlock {
  /** The account whose view it is, or `all_accounts` for a union. */
  account: string;
  /** `schema.view`. */
  view: string;
  /** Which columns, which objects, and what resolves it. */
  message: string;
  since: string;
}

/**
 * The typed views of `accounts` (and the all_accounts unions) that objects of
 * others keep from widening a column now; none before the control schema has
 * the table.
 */
export async function readTypedViewBlocks(
  db: Kysely<Database>,
  accounts: readonly string[],
): Promise<TypedViewBlock[]> {
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('hiresync.typed_view_blocks') is not null as present`.execute(db);
  if (!found[0]?.present) return [];
  const schemas = [...accounts.map(schemaOf), 'all_accounts'];
  const { rows } = await sql<{ schema: string; view: string; message: string; since: string }>`
    select schema, view, message, blocked_since::text as since from hiresync.typed_view_blocks
    where message is not null and schema = any(${schemas}::text[])
    order by schema, view`.execute(db);
  return rows.map((r) => ({
    account: accounts.find((a) => schemaOf(a) === r.schema) ?? r.schema,
    view: `${r.schema}.${r.view}`,
    message: r.message,
    since: r.since,
  }));
}
