import { schemaOf } from '../../accounts/account.js';
import { deleteAccountKeys, removeAccountSchedulers } from '../../accounts/account-keys.js';
import { AccountStore, UnknownAccountError } from '../../accounts/account-store.js';
import { TokenCipher } from '../../api/token-cipher.js';
import { loadAccountsConfig, loadDefaultAuth } from '../../config.js';
import { HiresyncError } from '../../errors.js';
import { createSyncQueue } from '../../queue/sync-queue.js';
import {
  dropSchema,
  refreshAllAccountsViews,
  schemaOwner,
} from '../../warehouse/account-schemas.js';
import { EXIT } from '../command.js';
import type { OptionTable } from '../options.js';
import { checkAccountName } from './account-name.js';
import { openDatabase, openRedis } from './connections.js';
import { defineSubcommand } from './subcommand.js';

/** Options of `hiresync accounts remove`. */
export const options = {
  'drop-data': {
    type: 'boolean',
    description: "also drop the account's schema, with every table and row in it",
  },
} as const satisfies OptionTable;

/** `hiresync accounts remove NAME [--drop-data]`: forgets an account, and with --drop-data its data. */
export const remove = defineSubcommand({
  name: 'remove',
  operand: 'NAME',
  summary: 'forget an account (and with --drop-data, its tables)',
  description: `Removes the account NAME: its row and sealed credentials, its BullMQ job
    schedulers, its checkpoints, and its token, token lock and rate-limit state in Redis
    (unless another account, default included, uses the same credential); the
    all_accounts views no longer include it. Its schema NAME and its data stay unless
    --drop-data is given; 'accounts add' of the same NAME takes them back. --drop-data
    refuses, before removing anything, a schema NAME that is not hiresync's.

    Needs DATABASE_URL and REDIS_URL. Exit 0 when removed; 1 when no account NAME is
    registered or Postgres or Redis fails; 2 on a usage or configuration error.`,
  options,
  async execute(values, name, { env, stdout, stderr }) {
    checkAccountName(name, 'removed');
    const config = loadAccountsConfig(env, { redis: true });
    // The environment's credentials (default), as the worker reads them: their
    // token and pacing keys stay when the removed account shares them.
    const defaultAuth = loadDefaultAuth(env);
    const defaultNamespace = defaultAuth && new TokenCipher(defaultAuth).namespace;
    const db = await openDatabase(config.databaseUrl, 'remove');
    try {
      const redis = await openRedis(config.redisUrl as string);
      const queue = createSyncQueue(redis, config.redisPrefix);
      try {
        const store = new AccountStore(db);
        if (values['drop-data']) {
          if (!(await store.get(name))) throw new UnknownAccountError(name);
          if ((await schemaOwner(db, schemaOf(name))) === 'other') {
            throw new HiresyncError(
              `schema ${schemaOf(name)} is not hiresync's (it holds objects hiresync did not create): --drop-data never drops it; nothing was removed ('hiresync accounts remove ${name}' without --drop-data forgets the account and leaves the schema alone)`,
            );
          }
        }
        const removed = await store.remove(name);
        const others = await store.list();
        const namespace = removed.credentialNamespace;
        const shared =
          namespace !== null &&
          (namespace === defaultNamespace ||
            others.some((a) => a.credentialNamespace === namespace));
        const schedulers = await removeAccountSchedulers(queue, name);
        const keys = await deleteAccountKeys(
          redis,
          config.redisPrefix,
          name,
          shared ? undefined : (removed.credentialNamespace ?? undefined),
        );
        const { warnings } = values['drop-data']
          ? await dropSchema(db, removed.schema)
          : await refreshAllAccountsViews(db);
        for (const warning of warnings) {
          stderr.write(`hiresync accounts remove: warning: ${warning}\n`);
        }
        stdout.write(
          `removed account ${name} (${schedulers.length} job scheduler(s), ${keys} Redis key(s)); ${
            values['drop-data']
              ? `dropped schema ${removed.schema}`
              : `its data stays in schema ${removed.schema} (drop it with --drop-data)`
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
