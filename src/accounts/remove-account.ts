import type { Kysely } from 'kysely';
import { coerceError, HiresyncError } from '../errors.js';
import type { RedisConnection } from '../redis/connect.js';
import { schemaOwner } from '../warehouse/layout/account-schema-owner.js';
import { allAccountsViewNames } from '../warehouse/layout/all-accounts-views.js';
import { unregisterAccount } from '../warehouse/layout/drop-account-schema.js';
import { dependentsOutside, schemaContents } from '../warehouse/layout/schema-dependents.js';
import { type StoredRows, storedRowsOf } from '../warehouse/layout/stored-rows.js';
import type { Database } from '../warehouse/tables.js';
import { clearRemoval, deleteAccountKeys, markRemoval, pendingRemoval } from './account-keys.js';
import type { AccountStore } from './account-store.js';
import { withdrawConnectLinks } from './connect-links.js';
import { type DropLeftDataOutcome, dropLeftData } from './drop-left-data.js';
import type { DropQuestion, RemovalRefusal, RemovalRequest } from './removal-request.js';
import type { AccountInfo } from './stored-account.js';

/** What a removal reaches: Postgres, Redis, and the account's job schedulers. */
export interface RemovalPorts {
  db: Kysely<Database>;
  /** The account registry on `db`. */
  store: AccountStore;
  /** Reached before anything changes: when it is down, nothing does. */
  redis: RedisConnection;
  /** HIRESYNC_REDIS_PREFIX. */
  prefix: string;
  /** Deletes the account's job schedulers (removeAccountSchedulers on the sync queue); returns their keys. */
  removeSchedulers: (account: string) => Promise<readonly string[]>;
  /** The environment's credentials' namespace (default): its token and pacing keys stay. */
  defaultNamespace: string | undefined;
}

/** How many of an account's job schedulers and Redis keys were deleted. */
export interface Cleaned {
  schedulers: number;
  keys: number;
}

/** What became of a removal. Failures of Postgres before anything changed are thrown. */
export type RemovalOutcome =
  /** Both phases done: unregistered (schema dropped with dropData), then Redis cleaned. */
  | {
      kind: 'removed';
      account: AccountInfo;
      dropData: boolean;
      cascaded: string[];
      warnings: string[];
      cleaned: Cleaned;
    }
  /** Phase one committed, phase two (Redis) failed: removing the name again finishes it. */
  | {
      kind: 'unfinished';
      account: AccountInfo;
      dropData: boolean;
      warnings: string[];
      error: Error;
    }
  /**
   * Phase two of an earlier removal, finished now (the name was unregistered
   * already); `leftData`: what became of dropping its left data when asked for.
   */
  | {
      kind: 'finished';
      name: string;
      cleaned: Cleaned;
      droppedEarlier: boolean;
      leftData?: DropLeftDataOutcome | { kind: 'failed'; error: Error };
    }
  /** Not registered, without dropData: rows of an earlier registration are stored (none: `unknown`). */
  | { kind: 'left data'; name: string; stored: StoredRows[] }
  | DropLeftDataOutcome
  | RemovalRefusal;

/**
 * `accounts remove NAME`, in two phases. Phase one, in Postgres, in one
 * transaction: the account's row, the all_accounts views and (dropData) its
 * schema. Phase two, after it commits, in Redis: its unused connect links,
 * job schedulers, checkpoints and (unless shared) its credential's keys. A
 * record written to Redis before phase one keeps what phase two needs, so
 * that removing the name again after a failed phase two finishes it. An
 * unregistered name with dropData: what an earlier registration left stored
 * is dropped ({@link dropLeftData}).
 */
export async function removeAccount(
  ports: RemovalPorts,
  request: RemovalRequest,
): Promise<RemovalOutcome> {
  const account = await ports.store.get(request.name);
  if (account) return removeRegistered(ports, account, request);
  // A removal whose Postgres part committed and whose Redis cleanup failed.
  const finished = await finishPendingRemoval(ports, request.name);
  if (!finished) {
    return request.dropData ? dropLeftData(ports.db, request) : leftData(ports.db, request.name);
  }
  if (finished.droppedEarlier || !request.dropData) return finished;
  const leftDataOutcome = await dropLeftData(ports.db, request).catch((error: unknown) => ({
    kind: 'failed' as const,
    error: coerceError(error),
  }));
  return { ...finished, leftData: leftDataOutcome };
}

/** Finishes phase two of an earlier removal of `name`, if one is recorded. */
async function finishPendingRemoval(
  ports: RemovalPorts,
  name: string,
): Promise<Extract<RemovalOutcome, { kind: 'finished' }> | undefined> {
  const pending = await pendingRemoval(ports.redis, ports.prefix, name);
  if (!pending) return undefined;
  const cleaned = await cleanUp(ports, name, pending.namespace);
  return { kind: 'finished', name, cleaned, droppedEarlier: pending.dropData };
}

/** An unregistered name, nothing to drop: what an earlier registration left, or unknown. */
async function leftData(db: Kysely<Database>, name: string): Promise<RemovalOutcome> {
  const stored = await storedRowsOf(db, name);
  return stored.length === 0 ? { kind: 'unknown', name } : { kind: 'left data', name, stored };
}

/** Both phases for a registered account, once its drop (if any) is checked and agreed to. */
async function removeRegistered(
  ports: RemovalPorts,
  account: AccountInfo,
  request: RemovalRequest,
): Promise<RemovalOutcome> {
  const { name, dropData } = request;
  // Checked once the account is found: finishing a pending removal drops nothing, so needs no consent.
  if (dropData && request.consent === 'no terminal') {
    return { kind: 'no terminal', of: 'account', name, dropping: `schema ${account.schema}` };
  }
  let cascade: string[] = [];
  if (dropData) {
    const checked = await checkDrop(ports.db, account, request);
    if (!Array.isArray(checked)) return checked;
    cascade = checked;
  }
  const { warnings, cascaded } = await unregister(ports, account, dropData, cascade);
  try {
    const cleaned = await cleanUp(ports, name, account.credentialNamespace);
    return { kind: 'removed', account, dropData, cascaded, warnings, cleaned };
  } catch (error) {
    return { kind: 'unfinished', account, dropData, warnings, error: coerceError(error) };
  }
}

/**
 * The checks before an account's schema is dropped: hiresync's, no
 * dependents outside it unless `cascade`, agreed to. Returns the objects
 * outside it to drop with it, or why not.
 */
async function checkDrop(
  db: Kysely<Database>,
  account: AccountInfo,
  request: RemovalRequest,
): Promise<string[] | RemovalRefusal> {
  const { name } = request;
  const { schema } = account;
  if ((await schemaOwner(db, schema)) === 'other') return { kind: 'not hiresync', name, schema };
  // hiresync's own all_accounts views are rebuilt without the account: not
  // counted. An analyst's view in all_accounts is counted as any other.
  const outside = await dependentsOutside(db, schema, {
    skipAllAccounts: await allAccountsViewNames(db),
  });
  if (outside.length > 0 && !request.cascade) {
    return { kind: 'dependents', of: 'account', name, schema, objects: outside };
  }
  if (typeof request.consent === 'function') {
    const { tables, rows } = await schemaContents(db, schema);
    const question: DropQuestion = { of: 'account', name, schema, tables, rows, cascade: outside };
    if (!(await request.consent(question))) return { kind: 'not confirmed', of: 'account', name };
  }
  return outside;
}

/**
 * Phase one. Why this order: the Postgres part (the row, the all_accounts
 * views, the schema) is one transaction: it commits whole or not at all, and
 * dropping the schema cannot be undone, so nothing in Redis may change
 * before it commits (schedulers and checkpoints are not restorable). Redis
 * has no transaction spanning BullMQ's schedulers and SCANs, so its cleanup
 * comes after the commit, and a failure there must be finishable: the record
 * written here first (which also proves Redis answers writes) keeps the
 * credential namespace that the deleted row took with it. Every cleanup step
 * is idempotent. Should Postgres fail, the record is cleared; one left behind
 * is harmless (the account is still registered, and its next removal writes
 * it again).
 */
async function unregister(
  ports: RemovalPorts,
  account: AccountInfo,
  dropData: boolean,
  cascade: string[],
): Promise<{ warnings: string[]; cascaded: string[] }> {
  const { redis, prefix, store } = ports;
  const { name } = account;
  await markRemoval(redis, prefix, name, { namespace: account.credentialNamespace, dropData });
  try {
    return await unregisterAccount(ports.db, account.schema, {
      unregister: (trx) => store.remove(name, trx),
      dropData,
      cascade,
    });
  } catch (error) {
    await clearRemoval(redis, prefix, name).catch(() => undefined);
    throw new HiresyncError(`${coerceError(error).message}; nothing was removed`, {
      cause: error,
    });
  }
}

/**
 * Phase two: withdraws the account's unused connect links, deletes its
 * schedulers and Redis keys (its credential's unless another account,
 * default included, shares it), then the record of its removal.
 */
async function cleanUp(
  ports: RemovalPorts,
  name: string,
  namespace: string | null,
): Promise<Cleaned> {
  const { db, redis, prefix } = ports;
  // After the commit: a connect link in use holds its row until its callback ends.
  await withdrawConnectLinks(db, name);
  const others = await ports.store.list();
  const shared =
    namespace !== null &&
    (namespace === ports.defaultNamespace ||
      others.some((a) => a.credentialNamespace === namespace));
  const schedulers = (await ports.removeSchedulers(name)).length;
  const keys = await deleteAccountKeys(
    redis,
    prefix,
    name,
    shared ? undefined : (namespace ?? undefined),
  );
  await clearRemoval(redis, prefix, name);
  return { schedulers, keys };
}
