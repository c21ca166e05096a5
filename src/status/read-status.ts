import type { Kysely } from 'kysely';
import { schemaOf } from '../account-name.js';
import type { ResourceName } from '../config/load-config.js';
import { loadCheckpoints } from '../queue/redis-checkpoint-store.js';
import type { RedisConnection } from '../redis/connect.js';
import { RESOURCE_NAMES } from '../resources/index.js';
import { redactSecrets } from '../secret.js';
import type { Checkpoint } from '../sync/ports.js';
import { type LatestRuns, readLatestRuns } from '../warehouse/reports/latest-runs.js';
import {
  defaultAccountRan,
  readTypedViewBlockRows,
  schemasWithoutRuns,
} from '../warehouse/reports/status-reads.js';
import type { Database, SyncRun } from '../warehouse/tables.js';

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
 * if any; errors redacted. `accounts` defaults to `default` alone. An
 * account with resources of its own (`own`, its settings) shows those
 * instead of the built-in ones, then any other it has runs of.
 *
 * A constant number of round trips whatever the number of accounts: the
 * runs of every account in one statement over hiresync.data_sync_runs
 * (src/warehouse/reports/latest-runs.ts), the accounts whose schema lacks its views in one
 * more, and every checkpoint in one pipelined read of Redis.
 */
export async function readStatus(
  db: Kysely<Database>,
  redis: RedisConnection,
  prefix: string,
  accounts: readonly string[] = ['default'],
  own: ReadonlyMap<string, readonly ResourceName[]> = new Map(),
): Promise<ResourceStatus[]> {
  const [latest, missing] = await Promise.all([
    readLatestRuns(db, accounts).catch((error: unknown) => {
      // A database before migrate: no shared table to read.
      if ((error as { code?: string }).code !== '42P01') throw error;
      return undefined;
    }),
    schemasWithoutRuns(db, accounts),
  ]);
  const runsOf = new Map<string, Map<string, LatestRuns>>();
  for (const runs of latest ?? []) {
    const of = runsOf.get(runs.account) ?? new Map<string, LatestRuns>();
    runsOf.set(runs.account, of);
    of.set(runs.resource, runs);
  }
  const pairs = accounts.flatMap((account) => {
    const ran = runsOf.get(account) ?? new Map<string, LatestRuns>();
    const shown = own.get(account) ?? RESOURCE_NAMES;
    const others = [...ran.keys()].filter((r) => !shown.includes(r)).sort();
    return [...shown, ...others].map((resource) => ({
      account,
      resource,
      runs: ran.get(resource),
    }));
  });
  const checkpoints = await loadCheckpoints(redis, prefix, pairs);
  // Rows written before errors were redacted may still hold an echoed credential.
  const clean = (run: SyncRun | undefined) =>
    run?.error ? { ...run, error: redactSecrets(run.error) } : run;
  return pairs.map(({ account, resource, runs }, i): ResourceStatus => {
    const checkpoint = checkpoints[i];
    if (runs === undefined && checkpoint === undefined) {
      const problem =
        latest === undefined
          ? "the database has no table hiresync.data_sync_runs: run 'hiresync migrate'"
          : missing.has(account)
            ? `schema ${schemaOf(account)} has no hiresync tables: run 'hiresync migrate'`
            : undefined;
      if (problem !== undefined) {
        return {
          account,
          resource,
          lastRun: undefined,
          lastSuccess: undefined,
          checkpoint,
          problem,
        };
      }
    }
    return {
      account,
      resource,
      lastRun: clean(runs?.lastRun),
      lastSuccess: clean(runs?.lastSuccess),
      // A run in flight has no outcome yet: the one before it still stands.
      ...(runs?.lastFinished ? { lastFinished: clean(runs.lastFinished) } : {}),
      checkpoint,
    };
  });
}

/**
 * Whether `default` is an account to show: the environment sets its
 * credentials (`configured`), or runs of it are stored (a deployment whose
 * worker has them, read from a shell that does not).
 */
export async function defaultAccountShown(
  db: Kysely<Database>,
  configured: boolean,
): Promise<boolean> {
  if (configured) return true;
  return defaultAccountRan(db);
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
  const schemas = [...accounts.map(schemaOf), 'all_accounts'];
  const rows = await readTypedViewBlockRows(db, schemas);
  return rows.map((r) => ({
    account: accounts.find((a) => schemaOf(a) === r.schema) ?? r.schema,
    view: `${r.schema}.${r.view}`,
    message: r.message,
    since: r.since,
  }));
}
