import { removeAccountSchedulers } from '../../accounts/account-keys.js';
import { AccountStore } from '../../accounts/account-store.js';
import { loadAccountsConfig } from '../../config/load-config.js';
import { createSyncQueue } from '../../queue/sync-job.js';
import type { RedisTarget } from '../../redis/redis-target.js';
import { EXIT } from '../command.js';
import type { OptionTable } from '../options.js';
import { openDatabase } from './connections.js';
import { openRedis } from './redis-connection.js';
import { checkAccountName, defineSubcommand } from './subcommand.js';

/** `hiresync accounts disable|enable` take no option but `--help`. */
export const options = {} as const satisfies OptionTable;

/** `hiresync accounts disable NAME`: the account runs nothing; its schedulers go at once. */
export const disable = defineSubcommand({
  name: 'disable',
  operand: 'NAME',
  description: `Sets the account NAME to disabled: it is no longer synced or scheduled, its
    queued runs are skipped, and its BullMQ job schedulers are removed at once. Its
    tables, its checkpoints and its sealed credentials stay ('accounts enable' resumes
    it), and it stays in the all_accounts views.

    Needs DATABASE_URL and REDIS_URL. Exit 0 when disabled (or already so); 1 when no
    account NAME is registered or Postgres or Redis fails; 2 on a usage or
    configuration error.`,
  options,
  async execute(_values, name, { env, stdout }) {
    checkAccountName(name, 'disabled');
    const config = loadAccountsConfig(env, { redis: true });
    const db = await openDatabase(config.databaseUrl, 'disable');
    try {
      const redis = await openRedis(config.redis as RedisTarget);
      const queue = createSyncQueue(redis, config.redisPrefix);
      try {
        const { changed } = await new AccountStore(db).setState(name, 'disabled');
        const removed = await removeAccountSchedulers(queue, name);
        stdout.write(
          `${changed ? `disabled account ${name}` : `account ${name} was already disabled`}; removed ${removed.length} job scheduler(s); its data stays in schema ${name}\n`,
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

/** `hiresync accounts enable NAME`: the account is synced and scheduled again. */
export const enable = defineSubcommand({
  name: 'enable',
  operand: 'NAME',
  description: `Sets the account NAME to enabled: the next 'hiresync sync' includes it, and running
    workers schedule it again at their next check of the schedules. A run it left
    unfinished resumes from its checkpoint. A partner account in state
    needs_reauthorization is not enabled: its refresh token would be refused again;
    'hiresync accounts authorize NAME' enables it with a new one. An account in state
    credentials_refused is enabled (say the vendor's side was at fault and is fixed);
    a wrong secret or key is better replaced with 'hiresync accounts update NAME',
    which enables it too.

    Needs DATABASE_URL. Exit 0 when enabled (or already so); 1 when no account NAME is
    registered, it needs reauthorization, or Postgres fails; 2 on a usage or
    configuration error.`,
  options,
  async execute(_values, name, { env, stdout }) {
    checkAccountName(name, 'enabled');
    const config = loadAccountsConfig(env);
    const db = await openDatabase(config.databaseUrl, 'enable');
    try {
      const { changed } = await new AccountStore(db).setState(name, 'enabled');
      stdout.write(changed ? `enabled account ${name}\n` : `account ${name} was already enabled\n`);
      return EXIT.ok;
    } finally {
      await db.destroy();
    }
  },
});
