import { sql } from 'kysely';
import { DEFAULT_ACCOUNT, schemaOf } from '../../account-name.js';
import { AccountSettingsStore } from '../../accounts/account-settings-store.js';
import { AccountStore } from '../../accounts/account-store.js';
import type { AccountInfo } from '../../accounts/stored-account.js';
import { WebhookSecretStore } from '../../accounts/webhook-secrets.js';
import { type AccountSettings, describeAccountSettings } from '../../config/account-settings.js';
import { loadAccountsConfig } from '../../config/load-config.js';
import { HiresyncError } from '../../errors.js';
import { isoTimestampOrNull } from '../../iso-timestamp.js';
import { credentialsRefusedOf, reauthorizationOf } from '../../status/account-report.js';
import { defaultAccountShown } from '../../status/read-status.js';
import { readLastSuccesses } from '../../warehouse/reports/latest-runs.js';
import { EXIT } from '../command.js';
import { formatTable } from '../format-table.js';
import type { OptionTable } from '../options.js';
import { tableTimestamp } from '../status-detail.js';
import { OVERVIEW_ABOVE } from '../status-overview.js';
import { openDatabase } from './connections.js';
import { type AccountListRow, formatAccountsOverview } from './list-overview.js';
import { defineSubcommand } from './subcommand.js';

/** Options of `hiresync accounts list`. */
export const options = {
  all: {
    type: 'boolean',
    description: `every account's row, however many accounts (above ${OVERVIEW_ABOVE} an overview is printed instead)`,
  },
  json: {
    type: 'boolean',
    description: 'print one JSON document instead (timestamps ISO 8601 UTC)',
  },
} as const satisfies OptionTable;

/** The table's columns: header and cell of a row. */
const COLUMNS: ReadonlyArray<readonly [string, (row: AccountListRow) => string]> = [
  ['account', (r) => r.name],
  ['auth mode', (r) => r.authMode ?? '-'],
  ['schema', (r) => r.schema],
  ['state', (r) => r.state],
  ['last success', (r) => tableTimestamp(r.lastSuccess)],
  ['resources', (r) => r.settings.resources?.join(',') ?? '-'],
  ['incremental every', (r) => r.settings.incrementalEvery ?? '-'],
  ['full cron', (r) => r.settings.fullCron ?? '-'],
];

/** `hiresync accounts list`: a table of `default` and every registered account. */
export const list = defineSubcommand({
  name: 'list',
  operand: '',
  description: `One row per account: name, auth mode, schema, state, when its last successful
    run finished, and its own settings: resources, incremental every and full cron (set
    by 'accounts add|update --resources, --incremental-every, --full-cron'; "-" where it
    has the deployment's HIRESYNC_RESOURCES, HIRESYNC_INCREMENTAL_EVERY or
    HIRESYNC_FULL_CRON). The first row is default, the environment's credentials
    (schema public; its auth mode from HIRESYNC_CLIENT_ID or HIRESYNC_API_KEY), shown
    when the environment sets them, or as "not configured here" when it does not but
    default has runs; without either there is no account default. Then the registered
    accounts by name. Never shows a secret. After the table, one line per partner
    account in state needs_reauthorization, and per account in state
    credentials_refused (the token service refused its secret or key), says why and
    what to do. A last line names the accounts whose webhook endpoint is on (a
    webhook secret is set: HIRESYNC_WEBHOOK_SECRET for default, 'accounts update NAME
    --webhook-secret' for the others), never the secret.

    With more than 50 accounts, an overview instead, unless --all: accounts
    per state and per auth mode, how many have settings of their own, the
    accounts that need re-authorizing or whose credentials were refused, and
    the ten stalest (oldest last success).

    With --json, one JSON document of the same facts: {"accounts": [{"name",
    "authMode", "schema", "state", "lastSuccess", "reauthorization",
    "credentialsRefused", "settings":
    {"resources", "incrementalEvery", "fullCron"}}], "webhooks": [names of the
    accounts with a webhook secret]}, null where the table shows "-", timestamps ISO
    8601 UTC.

    Needs DATABASE_URL. Exit 0, or 1 when Postgres cannot be read or has no hiresync
    tables yet (run 'hiresync migrate' first).`,
  options,
  async execute(values, _name, { env, stdout }) {
    const config = loadAccountsConfig(env);
    const db = await openDatabase(config.databaseUrl, 'list');
    try {
      // Before migrate there is no account table to read: say so, not an empty list.
      await sql`select 1 from hiresync.accounts limit 1`.execute(db).catch((error: unknown) => {
        if ((error as { code?: string }).code !== '42P01') throw error;
        throw new HiresyncError(
          "the database has no hiresync tables: run 'hiresync migrate' first",
          { cause: error },
        );
      });
      const registered = await new AccountStore(db).list();
      const settings = await new AccountSettingsStore(db).all();
      // default only where it exists: the environment sets its credentials, or it has run.
      const withDefault = await defaultAccountShown(db, config.defaultAuthMode !== undefined);
      const lastSuccesses = await readLastSuccesses(db, [
        ...(withDefault ? [DEFAULT_ACCOUNT] : []),
        ...registered.map((a) => a.name),
      ]).catch((error: unknown) => {
        // A database before the shared tables: no run to show yet.
        if ((error as { code?: string }).code !== '42P01') throw error;
        return new Map<string, string>();
      });
      const lastSuccess = (name: string) => isoTimestampOrNull(lastSuccesses.get(name));
      const rows: AccountListRow[] = [];
      if (withDefault) {
        rows.push({
          name: DEFAULT_ACCOUNT,
          authMode: config.defaultAuthMode ?? null,
          schema: schemaOf(DEFAULT_ACCOUNT),
          state: config.defaultAuthMode ? 'enabled' : 'not configured here',
          lastSuccess: lastSuccess(DEFAULT_ACCOUNT),
          reauthorization: null,
          credentialsRefused: null,
          settings: { resources: null, incrementalEvery: null, fullCron: null },
        });
      }
      for (const account of registered) {
        rows.push({
          name: account.name,
          authMode: account.authMode,
          schema: account.schema,
          state: account.state,
          lastSuccess: lastSuccess(account.name),
          reauthorization:
            account.state === 'needs_reauthorization'
              ? reauthorizationOf(account.name, account.partner?.reauthorizationReason)
              : null,
          credentialsRefused:
            account.state === 'credentials_refused'
              ? credentialsRefusedOf(account.name, account.authMode, account.refusalReason)
              : null,
          settings: settingsOf(settings.get(account.name)),
        });
      }
      // Whether each account's webhook endpoint is on: never the secret.
      const webhooks = [
        ...(withDefault && config.defaultWebhookSecret ? [DEFAULT_ACCOUNT] : []),
        ...(await new WebhookSecretStore(db).names()),
      ];
      const webhookLine =
        webhooks.length === 0
          ? ''
          : `\nwebhook secret set (POST HIRESYNC_PUBLIC_URL/webhooks/NAME accepted): ${webhooks.length > OVERVIEW_ABOVE && !values.all ? `${webhooks.length} accounts` : webhooks.join(', ')}\n`;
      if (values.json) {
        stdout.write(`${JSON.stringify({ accounts: rows, webhooks }, null, 2)}\n`);
        return EXIT.ok;
      }
      const notes = registered.flatMap((a) =>
        a.state === 'needs_reauthorization'
          ? [reauthorizationNote(a)]
          : a.state === 'credentials_refused'
            ? [credentialsRefusedNote(a)]
            : [],
      );
      if (rows.length > OVERVIEW_ABOVE && !values.all) {
        stdout.write(`${formatAccountsOverview(rows, notes)}\n${webhookLine}`);
        return EXIT.ok;
      }
      stdout.write(
        `${formatTable(
          COLUMNS.map(([header]) => header),
          rows.map((row) => COLUMNS.map(([, cell]) => cell(row))),
        )}\n`,
      );
      if (notes.length > 0) stdout.write(`\n${notes.join('\n')}\n`);
      stdout.write(webhookLine);
      return EXIT.ok;
    } finally {
      await db.destroy();
    }
  },
});

/** What `accounts list` says of an account in state needs_reauthorization: why, and what to do. */
export function reauthorizationNote(account: AccountInfo): string {
  const { reason, action } = reauthorizationOf(
    account.name,
    account.partner?.reauthorizationReason,
  );
  return `${account.name} needs reauthorization: ${reason}; ${action}`;
}

/** What `accounts list` says of an account in state credentials_refused: why, and what to do. */
export function credentialsRefusedNote(account: AccountInfo): string {
  const { reason, action } = credentialsRefusedOf(
    account.name,
    account.authMode,
    account.refusalReason,
  );
  return `${account.name}: credentials refused: ${reason}; ${action}`;
}

/** An account's own settings as `accounts list` shows them: null where it has the deployment's. */
function settingsOf(own: AccountSettings | undefined): AccountListRow['settings'] {
  const shown = describeAccountSettings(own);
  return {
    resources: own?.resources ? [...own.resources] : null,
    incrementalEvery: shown.incrementalEvery === '-' ? null : shown.incrementalEvery,
    fullCron: own?.fullCron ?? null,
  };
}
