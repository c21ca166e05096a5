import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { schemaOf } from '../../account-name.js';
import {
  clearRemoval,
  deleteAccountKeys,
  markRemoval,
  pendingRemoval,
  removeAccountSchedulers,
} from '../../accounts/account-keys.js';
import { AccountStore } from '../../accounts/account-store.js';
import { withdrawConnectLinks } from '../../accounts/connect-links.js';
import { UnknownAccountError } from '../../accounts/stored-account.js';
import { TokenCipher } from '../../api/token-cipher.js';
import { loadAccountsConfig, loadDefaultAuth } from '../../config/load-config.js';
import { coerceError, HiresyncError, UsageError } from '../../errors.js';
import { createSyncQueue } from '../../queue/sync-job.js';
import { schemaOwner } from '../../warehouse/layout/account-schema-owner.js';
import { allAccountsViewNames } from '../../warehouse/layout/all-accounts-views.js';
import {
  DependentObjectsError,
  unregisterAccount,
} from '../../warehouse/layout/drop-account-schema.js';
import { dependentsOutside, schemaContents } from '../../warehouse/layout/schema-dependents.js';
import { describeStoredRows, storedRowsOf } from '../../warehouse/layout/stored-rows.js';
import { EXIT } from '../command.js';
import type { OptionTable } from '../options.js';
import { openDatabase } from './connections.js';
import { removeStoredData } from './drop-stored-data.js';
import { readLine } from './read-secret.js';
import { openRedis } from './redis-connection.js';
import { checkAccountName, defineSubcommand } from './subcommand.js';

/** Options of `hiresync accounts remove`. */
export const options = {
  'drop-data': {
    type: 'boolean',
    description: "also drop the account's schema, with every table and row in it",
  },
  yes: {
    type: 'boolean',
    description: 'with --drop-data: drop without asking (for scripts; required without a terminal)',
  },
  cascade: {
    type: 'boolean',
    description:
      "with --drop-data: also drop the objects of other schemas that depend on the account's schema (views, foreign keys, ...), naming them",
  },
} as const satisfies OptionTable;

/** `hiresync accounts remove NAME [--drop-data [--yes] [--cascade]]`: forgets an account, and with --drop-data its data. */
export const remove = defineSubcommand({
  name: 'remove',
  operand: 'NAME',
  description: `Removes the account NAME: its row and sealed credentials, its unused connect links, its BullMQ job
    schedulers, its checkpoints, and its token, token lock and rate-limit state in Redis
    (unless another account, default included, uses the same credential); the
    all_accounts views no longer include it. Its schema NAME and its data stay unless
    --drop-data is given; 'accounts add NAME --reuse-data' takes them back (without
    --reuse-data, add refuses a name whose data is stored: a name reused for another
    customer never shows the earlier one's rows).

    --drop-data also works for a name no account has: it drops what an earlier
    registration of NAME left stored (removed without --drop-data), its rows of the
    shared tables and its schema NAME if hiresync's, asking, refusing dependents unless
    --cascade, all or nothing, as below; after it, 'accounts add NAME' starts empty.

    --drop-data drops schema NAME too. On a terminal it first asks (drop schema NAME
    with N tables and M rows? [y/N]) and goes on only on y or yes; --yes skips the
    question, and without a terminal --yes is required (exit 2 otherwise, nothing
    changed; finishing an interrupted removal, which drops nothing, needs none). It
    refuses a schema NAME that is not hiresync's, and one that objects of other schemas
    depend on (an analyst's view selecting from NAME.jobs, a foreign key to one of its
    tables, an analyst's own view in all_accounts), naming each of them, unless
    --cascade, which drops them too and says which; the all_accounts views hiresync
    builds are rebuilt without NAME.

    All or nothing: the row, the all_accounts views and the schema change in one
    Postgres transaction; when it fails, nothing is removed, in Postgres or Redis.
    Redis is cleaned after it commits; should that fail, running 'hiresync accounts
    remove NAME' again (with or without --drop-data) finishes it and says whether the
    schema was dropped.

    Needs DATABASE_URL and REDIS_URL. Exit 0 when removed (or an unregistered NAME's data dropped); 1
    when no account NAME is registered (with --drop-data: nor anything of it stored), the
    drop is refused or not confirmed, or Postgres or Redis fails; 2 on a
    usage or configuration error (--drop-data without --yes and without a terminal).`,
  options,
  async execute(values, name, { env, stdin, stdout, stderr }) {
    checkAccountName(name, 'removed');
    const dropData = values['drop-data'] === true;
    if (!dropData && (values.cascade || values.yes)) {
      throw new UsageError(
        `${values.cascade ? '--cascade' : '--yes'} applies only with --drop-data (remove without --drop-data drops nothing)`,
      );
    }
    const ask = dropData && !values.yes;
    // Checked once the account is found: finishing a pending removal drops nothing, so needs no --yes.
    const unconfirmable = ask && stdin?.isTTY !== true;
    const config = loadAccountsConfig(env, { redis: true });
    const prefix = config.redisPrefix;
    // The environment's credentials (default), as the worker reads them: their
    // token and pacing keys stay when the removed account shares them.
    const defaultAuth = loadDefaultAuth(env);
    const defaultNamespace = defaultAuth && new TokenCipher(defaultAuth).namespace;
    const db = await openDatabase(config.databaseUrl, 'remove');
    try {
      // Redis is reached before anything changes: when it is down, nothing does.
      const redis = await openRedis(config.redisUrl as string);
      const queue = createSyncQueue(redis, prefix);
      try {
        const store = new AccountStore(db);
        /** Withdraws the account's unused connect links, deletes its schedulers and Redis keys, then the record of its removal. */
        const cleanUp = async (namespace: string | null) => {
          // After the commit: a connect link in use holds its row until its callback ends.
          await withdrawConnectLinks(db, name);
          const others = await store.list();
          const shared =
            namespace !== null &&
            (namespace === defaultNamespace ||
              others.some((a) => a.credentialNamespace === namespace));
          const cleaned = await cleanRedis(
            redis,
            queue,
            prefix,
            name,
            shared ? undefined : (namespace ?? undefined),
          );
          await clearRemoval(redis, prefix, name);
          return cleaned;
        };

        const account = await store.get(name);
        if (!account) {
          // A removal whose Postgres part committed and whose Redis cleanup failed.
          const pending = await pendingRemoval(redis, prefix, name);
          if (pending) {
            const { schedulers, keys } = await cleanUp(pending.namespace);
            stdout.write(
              `finished removing account ${name} (${schedulers} job scheduler(s), ${keys} Redis key(s)); it was already unregistered${
                pending.dropData
                  ? ` and schema ${schemaOf(name)} already dropped`
                  : dropData
                    ? ''
                    : `; its data stays in schema ${schemaOf(name)}`
              }\n`,
            );
            if (pending.dropData || !dropData) return EXIT.ok;
          }
          // What an earlier registration left: dropped with --drop-data, else named.
          if (dropData) {
            return await removeStoredData({
              db,
              name,
              cascade: values.cascade === true,
              ask,
              stdin,
              stdout,
              stderr,
            });
          }
          const stored = await storedRowsOf(db, name);
          if (stored.length === 0) throw new UnknownAccountError(name);
          throw new HiresyncError(
            `no account ${name} is registered; ${name}: ${describeStoredRows(stored)} stored from an earlier registration: 'hiresync accounts remove ${name} --drop-data' drops them`,
          );
        }

        if (unconfirmable) {
          throw new UsageError(
            `--drop-data drops schema ${account.schema} with every table and row in it, and there is no terminal to ask on: confirm with --yes (hiresync accounts remove ${name} --drop-data --yes); nothing was removed`,
          );
        }
        let cascade: string[] = [];
        if (dropData) {
          if ((await schemaOwner(db, account.schema)) === 'other') {
            throw new HiresyncError(
              `schema ${account.schema} is not hiresync's (it holds objects hiresync did not create): --drop-data never drops it; nothing was removed ('hiresync accounts remove ${name}' without --drop-data forgets the account and leaves the schema alone)`,
            );
          }
          // hiresync's own all_accounts views are rebuilt without the account: not
          // counted. An analyst's view in all_accounts is counted as any other.
          const outside = await dependentsOutside(db, account.schema, {
            skipAllAccounts: await allAccountsViewNames(db),
          });
          if (outside.length > 0 && !values.cascade) {
            throw new HiresyncError(
              `${new DependentObjectsError(account.schema, outside).message}; nothing was removed`,
            );
          }
          cascade = outside;
          if (ask) {
            const { tables, rows } = await schemaContents(db, account.schema);
            stderr.write(
              `drop schema ${account.schema} with ${tables} tables and ${rows} rows${
                cascade.length > 0 ? `, and outside it ${cascade.join(', ')}` : ''
              }, and remove account ${name}? [y/N] `,
            );
            const answer = (await readLine(stdin, 'answer')).toLowerCase();
            if (answer !== 'y' && answer !== 'yes') {
              stderr.write('hiresync accounts remove: not confirmed; nothing was removed\n');
              return EXIT.failed;
            }
          }
        }

        // Why this order. The Postgres part (the row, the all_accounts views,
        // the schema) is one transaction: it commits whole or not at all, and
        // dropping the schema cannot be undone, so nothing in Redis may change
        // before it commits (schedulers and checkpoints are not restorable).
        // Redis has no transaction spanning BullMQ's schedulers and SCANs, so
        // its cleanup comes after the commit, and a failure there must be
        // finishable: the record written here first (which also proves Redis
        // answers writes) keeps the credential namespace that the deleted row
        // took with it, and `accounts remove NAME` of an unregistered NAME
        // with that record finishes the cleanup. Every cleanup step is
        // idempotent. Should Postgres fail, the record is cleared; one left
        // behind is harmless (the account is still registered, and its next
        // removal writes it again).
        await markRemoval(redis, prefix, name, {
          namespace: account.credentialNamespace,
          dropData,
        });
        let outcome: { warnings: string[]; cascaded: string[] };
        try {
          outcome = await unregisterAccount(db, account.schema, {
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
        for (const warning of outcome.warnings) {
          stderr.write(`hiresync accounts remove: warning: ${warning}\n`);
        }
        let cleaned: { schedulers: number; keys: number };
        try {
          cleaned = await cleanUp(account.credentialNamespace);
        } catch (error) {
          throw new HiresyncError(
            `account ${name} is unregistered${dropData ? ` and schema ${account.schema} dropped` : ''}, but its connect links, job schedulers and Redis keys could not all be deleted (${coerceError(error).message}): run 'hiresync accounts remove ${name}' again to finish`,
            { cause: error },
          );
        }
        stdout.write(
          `removed account ${name} (${cleaned.schedulers} job scheduler(s), ${cleaned.keys} Redis key(s)); ${
            dropData
              ? `dropped schema ${account.schema}${
                  outcome.cascaded.length > 0
                    ? `; also dropped: ${outcome.cascaded.join(', ')}`
                    : ''
                }`
              : `its data stays in schema ${account.schema} (drop it with --drop-data; only 'hiresync accounts add ${name} --reuse-data' shows it again)`
          }\n`,
        );
        return EXIT.ok;
      } finally {
        await queue.close();
        redis.disconnect();
      }
    } finally {
      await db.destroy();
    }
  },
});

/** Deletes an account's job schedulers and its Redis keys (see deleteAccountKeys); both idempotent. */
async function cleanRedis(
  redis: Redis,
  queue: Queue,
  prefix: string,
  account: string,
  namespace: string | undefined,
): Promise<{ schedulers: number; keys: number }> {
  const schedulers = await removeAccountSchedulers(queue, account);
  const keys = await deleteAccountKeys(redis, prefix, account, namespace);
  return { schedulers: schedulers.length, keys };
}
