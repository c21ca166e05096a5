import { DEFAULT_ACCOUNT, schemaOf } from '../../account-name.js';
import { AccountSettingsStore } from '../../accounts/account-settings-store.js';
import { AccountStore } from '../../accounts/account-store.js';
import type { AccountInfo } from '../../accounts/stored-account.js';
import { describeAccountSettings } from '../../config/account-settings.js';
import { loadAccountsConfig } from '../../config.js';
import { defaultAccountShown } from '../../status.js';
import { EXIT } from '../command.js';
import { formatTable } from '../format-table.js';
import type { OptionTable } from '../options.js';
import { openDatabase } from './connections.js';
import { defineSubcommand } from './subcommand.js';

/** `hiresync accounts list` takes no option but `--help`. */
export const options = {} as const satisfies OptionTable;

/** `hiresync accounts list`: a table of `default` and every registered account. */
export const list = defineSubcommand({
  name: 'list',
  operand: '',
  summary: 'show every account: auth mode, schema, state, last success',
  description: `One row per account: name, auth mode, schema, state, when its last successful
    run finished, and its own settings: resources, incremental every and full cron (set
    by 'accounts add|update --resources, --incremental-every, --full-cron'; "-" where it
    has the deployment's HIRESYNC_RESOURCES, HIRESYNC_INCREMENTAL_EVERY or
    HIRESYNC_FULL_CRON). The first row is default, the environment's credentials
    (schema public; its auth mode from HIRESYNC_CLIENT_ID or HIRESYNC_API_KEY), shown
    when the environment sets them, or as "not configured here" when it does not but
    default has runs; without either there is no account default. Then the registered
    accounts by name. Never shows a secret. After the table, one line per partner
    account in state needs_reauthorization says why and what to do.

    Needs DATABASE_URL. Exit 0, or 1 when Postgres cannot be read.`,
  options,
  async execute(_values, _name, { env, stdout }) {
    const config = loadAccountsConfig(env);
    const db = await openDatabase(config.databaseUrl, 'list');
    try {
      const store = new AccountStore(db);
      const registered = await store.list();
      const settings = await new AccountSettingsStore(db).all();
      const rows: string[][] = [];
      // default only where it exists: the environment sets its credentials, or it has run.
      if (await defaultAccountShown(db, config.defaultAuthMode !== undefined)) {
        rows.push([
          DEFAULT_ACCOUNT,
          config.defaultAuthMode ?? '-',
          schemaOf(DEFAULT_ACCOUNT),
          config.defaultAuthMode ? 'enabled' : 'not configured here',
          (await store.lastSuccess(DEFAULT_ACCOUNT)) ?? '-',
          '-',
          '-',
          '-',
        ]);
      }
      for (const account of registered) {
        const own = describeAccountSettings(settings.get(account.name));
        rows.push([
          account.name,
          account.authMode,
          account.schema,
          account.state,
          (await store.lastSuccess(account.name)) ?? '-',
          own.resources,
          own.incrementalEvery,
          own.fullCron,
        ]);
      }
      stdout.write(
        `${formatTable(['account', 'auth mode', 'schema', 'state', 'last success', 'resources', 'incremental every', 'full cron'], rows)}\n`,
      );
      const waiting = registered.filter((a) => a.state === 'needs_reauthorization');
      if (waiting.length > 0) stdout.write(`\n${waiting.map(reauthorizationNote).join('\n')}\n`);
      return EXIT.ok;
    } finally {
      await db.destroy();
    }
  },
});

/** What `accounts list` says of an account in state needs_reauthorization: why, and what to do. */
export function reauthorizationNote(account: AccountInfo): string {
  const reason = account.partner?.reauthorizationReason ?? 'its refresh token was refused';
  return `${account.name} needs reauthorization: ${reason}; run 'hiresync accounts authorize ${account.name}' (its data is kept)`;
}
