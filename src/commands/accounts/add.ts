import { accountNameProblem, schemaOf } from '../../accounts/account.js';
import { AccountExistsError, AccountStore, type NewAccount } from '../../accounts/account-store.js';
import { loadAccountsConfig, loadAccountUrls } from '../../config.js';
import { coerceError, HiresyncError, UsageError } from '../../errors.js';
import { Secret } from '../../secret.js';
import {
  claimAccountSchema,
  migrateControl,
  migrateSchemas,
  refreshAllAccountsViews,
  schemaOwner,
} from '../../warehouse/account-schemas.js';
import { PUBLIC_SCHEMA } from '../../warehouse/database.js';
import { EXIT } from '../command.js';
import type { OptionTable } from '../options.js';
import { openDatabase } from './connections.js';
import { readSecretLine } from './read-secret.js';
import { defineSubcommand } from './subcommand.js';

/** Options of `hiresync accounts add`. */
export const options = {
  'client-id': {
    type: 'string',
    value: 'ID',
    description:
      'client credentials (custom integration): the client id; the client secret is read from standard input',
  },
  sub: {
    type: 'string',
    value: 'N',
    description: 'with --client-id: the numeric user id sent as sub at token time',
  },
  'api-key': {
    type: 'boolean',
    description: 'transition mode: a version 1/2 API key, read from standard input',
  },
  partner: {
    type: 'boolean',
    description: 'partner integration: not yet supported (arrives with partner integrations)',
  },
  'base-url': {
    type: 'string',
    value: 'URL',
    description: "the account's {base_url}; https unless loopback (default: HIRESYNC_BASE_URL)",
  },
  'auth-url': {
    type: 'string',
    value: 'URL',
    description:
      "with --client-id: the token service's {auth_url}; https unless loopback (default: HIRESYNC_AUTH_URL)",
  },
} as const satisfies OptionTable;

/** `hiresync accounts add NAME`: registers an account, migrates its schema, refreshes the views. */
export const add = defineSubcommand({
  name: 'add',
  operand: 'NAME',
  summary: 'register an account; its secret or key is read from standard input',
  description: `Registers the account NAME (1 to 40 of a-z, 0-9 and _, starting with a letter;
    not default, public, hiresync, all_accounts, information_schema or pg_...), whose
    tables live in schema NAME. Client credentials: --client-id ID [--sub N], the client
    secret on standard input. Transition mode: --api-key, the key on standard input.
    One line is read from standard input (e.g. printf '%s\\n' "$SECRET" | hiresync accounts
    add acme --client-id ID); a secret is never taken from the command line, nor printed.
    It is stored sealed with HIRESYNC_SECRET_KEY (required). The control schema, public
    and the new schema are migrated and the all_accounts views refreshed before it
    returns. A schema NAME left by 'accounts remove' without --drop-data is taken back
    with its data; any other schema NAME that holds something is refused. When the new
    schema cannot be made ready, the account is not registered.

    Needs DATABASE_URL and HIRESYNC_SECRET_KEY. Exit 0 when added; 1 when the name is
    taken, its schema belongs to something else, or Postgres fails; 2 on a usage or
    configuration error (bad NAME, no or several auth modes, an empty standard input,
    a missing HIRESYNC_SECRET_KEY, a URL breaking the https rule), before connecting.`,
  options,
  async execute(values, name, { env, stdin, stdout, stderr }) {
    const problem = accountNameProblem(name);
    if (problem) throw new UsageError(problem);
    const modes = [
      values['client-id'] !== undefined && '--client-id',
      values['api-key'] && '--api-key',
      values.partner && '--partner',
    ].filter((m): m is string => typeof m === 'string');
    if (modes.length !== 1) {
      throw new UsageError(
        modes.length === 0
          ? `say how account ${name} authenticates: --client-id ID (client credentials, secret on standard input) or --api-key (key on standard input)`
          : `choose one way for account ${name} to authenticate, not ${modes.join(' and ')}`,
      );
    }
    if (values.partner) {
      throw new UsageError(
        '--partner is not yet supported: partner accounts arrive with partner integrations (hiresync accounts authorize)',
      );
    }
    const clientId = values['client-id']?.trim();
    if (clientId === '') throw new UsageError('--client-id was given an empty client id');
    if (clientId === undefined) {
      for (const flag of ['sub', 'auth-url'] as const) {
        if (values[flag] !== undefined) {
          throw new UsageError(`--${flag} applies only to client credentials (--client-id)`);
        }
      }
    }
    const sub = values.sub?.trim();
    if (sub !== undefined && !/^\d+$/.test(sub)) {
      throw new UsageError(
        `--sub must be a numeric user id (digits only), got ${JSON.stringify(sub)}`,
      );
    }
    const config = loadAccountsConfig(env, {
      secretKey: 'seal the credentials of registered accounts',
    });
    const urls = loadAccountUrls(
      env,
      { baseUrl: values['base-url'], authUrl: values['auth-url'] },
      clientId !== undefined,
    );
    const what = clientId !== undefined ? 'client secret' : 'API key';
    const secret = new Secret(await readSecretLine(stdin, what));
    const account: NewAccount = {
      name,
      baseUrl: urls.baseUrl,
      auth:
        clientId !== undefined
          ? {
              mode: 'client_credentials',
              authUrl: urls.authUrl ?? '',
              clientId,
              clientSecret: secret,
              sub,
            }
          : { mode: 'api_key', apiKey: secret },
    };

    const db = await openDatabase(config.databaseUrl, 'add');
    try {
      await migrateControl(db);
      const store = new AccountStore(db, config.secretBox);
      if (await store.get(name)) {
        throw new AccountExistsError(
          `account ${name} already exists; remove it first ('hiresync accounts remove ${name}') or choose another name`,
        );
      }
      const owner = await schemaOwner(db, schemaOf(name));
      if (owner === 'other') throw foreignSchema(name);
      const added = await store.add(account);
      let migrated = false;
      try {
        await migrateSchemas(db, [PUBLIC_SCHEMA]);
        await claimAccountSchema(db, added.schema);
        await migrateSchemas(db, [added.schema]);
        migrated = true;
        const { warnings } = await refreshAllAccountsViews(db);
        for (const warning of warnings)
          stderr.write(`hiresync accounts add: warning: ${warning}\n`);
      } catch (error) {
        const reason = coerceError(error).message;
        if (migrated) {
          throw new HiresyncError(
            `account ${name} is registered and its schema ready, but the all_accounts views could not be rebuilt (${reason}); run 'hiresync migrate' to finish`,
            { cause: error },
          );
        }
        // A schema that was not hiresync's before this add is not taken: the
        // account is registered only once its schema is ready.
        const undone = owner === 'hiresync' ? undefined : await unregister(store, name);
        // A migration of public drops the views over it first: rebuild them.
        const views = await refreshAllAccountsViews(
          db,
          undefined,
          new Map([[name, `its schema could not be made ready (${reason})`]]),
        ).then(
          ({ warnings }) => warnings,
          (refresh: unknown) => [
            `the all_accounts views could not be rebuilt (${coerceError(refresh).message}); run 'hiresync migrate'`,
          ],
        );
        for (const warning of views) stderr.write(`hiresync accounts add: warning: ${warning}\n`);
        throw new HiresyncError(
          undone === undefined
            ? `account ${name} is registered, but its schema could not be made ready (${reason}); run 'hiresync migrate' to finish`
            : undone
              ? `account ${name} was not added: its schema could not be made ready (${reason}); nothing is registered`
              : `account ${name} could not be added: its schema could not be made ready (${reason}), and its registration could not be undone: run 'hiresync accounts remove ${name}' (without --drop-data)`,
          { cause: error },
        );
      }
      stdout.write(
        `added account ${name} (${added.authMode === 'client_credentials' ? 'client credentials' : 'API key'}, schema ${added.schema}); it syncs with the next 'hiresync sync' or worker\n`,
      );
      return EXIT.ok;
    } finally {
      await db.destroy();
    }
  },
});

/** The failure of `accounts add NAME` when schema NAME is another application's. */
function foreignSchema(name: string): HiresyncError {
  return new HiresyncError(
    `schema ${name} already exists and holds tables hiresync did not create (it is neither marked as nor migrated as one of hiresync's account schemas); choose another name`,
  );
}

/** Deletes the row `accounts add` just inserted; false when that fails too. */
async function unregister(store: AccountStore, name: string): Promise<boolean> {
  try {
    await store.remove(name);
    return true;
  } catch {
    return false;
  }
}
