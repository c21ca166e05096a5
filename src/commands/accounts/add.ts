import { accountNameProblem } from '../../account-name.js';
import { AccountStore } from '../../accounts/account-store.js';
import { type AddAccountOptions, addAccount } from '../../accounts/add-account.js';
import type { AccountInfo } from '../../accounts/stored-account.js';
import { loadAccountUrls } from '../../config/account-urls.js';
import { loadAccountsConfig } from '../../config/load-config.js';
import type { Config } from '../../config/types.js';
import { UsageError } from '../../errors.js';
import { catalogFor, typedViewDeclarations } from '../../resources/index.js';
import { Secret } from '../../secret.js';
import { EXIT, type Output } from '../command.js';
import type { OptionTable, OptionValues } from '../options.js';
import { describeAuthMode } from './auth-mode.js';
import { openDatabase } from './connections.js';
import { loadPartnerApp } from './partner-app.js';
import { loadProbeConfig } from './probe-config.js';
import { readSecretLine } from './read-secret.js';
import { ownListResources, readSettingsOptions, settingsOptions } from './settings-options.js';
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
    description:
      "partner integration: the customer's refresh token, read from standard input (or use 'accounts authorize')",
  },
  'base-url': {
    type: 'string',
    value: 'URL',
    description:
      "the account's {base_url}; https unless loopback (default: HIRESYNC_BASE_URL, else the live service's)",
  },
  'auth-url': {
    type: 'string',
    value: 'URL',
    description:
      "with --client-id or --partner: the token service's {auth_url}; https unless loopback (default: HIRESYNC_AUTH_URL, else the live service's)",
  },
  'no-test': {
    type: 'boolean',
    description:
      "register it without testing it (no token minted, no page read, REDIS_URL not needed); 'hiresync accounts test NAME' tests it later",
  },
  'reuse-data': {
    type: 'boolean',
    description:
      'rows of an earlier registration of NAME are stored (it was removed without --drop-data) and this is the same customer back: show them its data again',
  },
  ...settingsOptions,
} as const satisfies OptionTable;

/** `hiresync accounts add NAME`: registers an account, migrates its schema, refreshes the views. */
export const add = defineSubcommand({
  name: 'add',
  operand: 'NAME',
  description: `Registers the account NAME (1 to 40 of a-z, 0-9 and _, starting with a letter;
    not default, public, hiresync, all_accounts, information_schema or pg_...), whose
    tables live in schema NAME. Client credentials: --client-id ID [--sub N], the client
    secret on standard input. Transition mode: --api-key, the key on standard input.
    Partner integration: --partner, the customer's refresh token (issued to the partner
    app HIRESYNC_PARTNER_CLIENT_ID/_SECRET, both required) on standard input; 'hiresync
    accounts authorize NAME' obtains one through the browser instead. One line is read
    from standard input (e.g. printf '%s\\n' "$SECRET" | hiresync accounts add acme
    --client-id ID); a secret is never taken from the command line, nor printed. It is
    stored sealed with HIRESYNC_SECRET_KEY (required). The control schema, public
    and the new schema are migrated and the all_accounts views refreshed before it
    returns. --resources, --incremental-every and --full-cron give it settings of its own
    instead of HIRESYNC_RESOURCES, HIRESYNC_INCREMENTAL_EVERY and HIRESYNC_FULL_CRON
    (read as those are; the tables of a list resource only it names are made in its
    schema alone). A schema NAME left by 'accounts remove' without --drop-data is taken back;
    any other existing schema NAME, even an empty one, is refused: only a schema hiresync
    created (marked as its own) is taken. When the new schema cannot be made ready, the
    account is not registered.

    A name is never given another customer's data silently: while rows of an earlier
    registration of NAME are stored (it was removed without --drop-data), add refuses
    before registering anything (exit 1), naming them per table (acme: 1,204
    tracking_links, 88 jobs, 3 sync_runs stored from an earlier registration), unless
    --reuse-data (the same customer is back: they see them again). For another
    customer, drop them first: 'hiresync accounts remove NAME --drop-data'.

    Unless --no-test, the account is tested as 'hiresync accounts test' does: a new
    access token is minted with the credentials (a partner account: a refresh grant,
    whose rotated refresh token is what gets stored), and a credential that cannot
    mint one is refused: nothing is registered (no row, no schema). Once registered,
    the first page of each of its resources (its own, else HIRESYNC_RESOURCES) is read and each one's
    outcome printed (ok, not permitted (scope ...), or the error); a resource not
    permitted or failing is printed, not refused.

    Needs DATABASE_URL and HIRESYNC_SECRET_KEY (and with --partner the partner app);
    unless --no-test, also what 'hiresync sync' needs (REDIS_URL, the API settings),
    but not the environment's own credentials. Exit 0 when added (whatever the
    resources' test found); 1 when no token could be minted with the credentials, the
    name is taken, rows of an earlier registration of NAME are stored (without
    --reuse-data), its schema belongs to something else, or Postgres or Redis fails; 2
    on a usage or configuration error (bad NAME, no or several auth modes, an empty
    standard input, a missing HIRESYNC_SECRET_KEY, a URL breaking the https rule, a bad setting),
    before connecting.`,
  options,
  async execute(values, name, { env, stdin, stdout, stderr }) {
    const problem = accountNameProblem(name);
    if (problem) throw new UsageError(problem);
    const { clientId, sub } = readAuthFlags(values, name);
    const settings = readSettingsOptions(values);
    const config = loadAccountsConfig(env, {
      secretKey: 'seal the credentials of registered accounts',
    });
    const partner = values.partner ? loadPartnerApp(env, 'add a partner account') : undefined;
    const probeConfig = values['no-test'] === true ? undefined : loadProbeConfig(env, name);
    const urls = loadAccountUrls(
      env,
      { baseUrl: values['base-url'], authUrl: values['auth-url'] },
      clientId !== undefined || values.partner === true,
    );
    const what =
      clientId !== undefined ? 'client secret' : values.partner ? 'refresh token' : 'API key';
    const secret = new Secret(await readSecretLine(stdin, what));
    const { baseUrl } = urls;
    const authUrl = urls.authUrl ?? '';
    const account: AddAccountOptions<unknown>['account'] = values.partner
      ? { partner: { name, baseUrl, authUrl, refreshToken: secret } }
      : {
          credentials: {
            name,
            baseUrl,
            auth:
              clientId !== undefined
                ? { mode: 'client_credentials', authUrl, clientId, clientSecret: secret, sub }
                : { mode: 'api_key', apiKey: secret },
          },
        };
    const db = await openDatabase(config.databaseUrl, 'add');
    try {
      const outcome = await addAccount({
        db,
        store: new AccountStore(db, config.secretKeys, { partner }),
        account,
        reuseData: values['reuse-data'] === true,
        openTester: probeConfig && (await openTester(probeConfig, stderr)),
        warn: (warning) => stderr.write(`hiresync accounts add: warning: ${warning}\n`),
        settings: {
          settings,
          ownResources: ownListResources(settings),
          typedViews: typedViewDeclarations(catalogFor(ownListResources(settings))),
        },
      });
      if (outcome.kind === 'refused') throw outcome.error;
      const { account: added, resources } = outcome;
      stdout.write(`${describeAdded(added)}\n`);
      if (resources !== undefined) {
        const { formatProbe } = await import('./account-probe.js');
        const probe = { token: { ok: true as const }, resources };
        stdout.write(`${formatProbe(name, describeAuthMode(added.authMode), probe)}\n`);
      }
      return EXIT.ok;
    } finally {
      await db.destroy();
    }
  },
});

/** The auth mode flags, checked: one mode, and the flags that go with it. */
function readAuthFlags(
  values: OptionValues<typeof options>,
  name: string,
): { clientId: string | undefined; sub: string | undefined } {
  const modes = [
    values['client-id'] !== undefined && '--client-id',
    values['api-key'] && '--api-key',
    values.partner && '--partner',
  ].filter((m): m is string => typeof m === 'string');
  if (modes.length !== 1) {
    throw new UsageError(
      modes.length === 0
        ? `say how account ${name} authenticates: --client-id ID (client credentials, secret on standard input), --api-key (key on standard input) or --partner (refresh token on standard input)`
        : `choose one way for account ${name} to authenticate, not ${modes.join(' and ')}`,
    );
  }
  const clientId = values['client-id']?.trim();
  if (clientId === '') throw new UsageError('--client-id was given an empty client id');
  if (clientId === undefined && values.sub !== undefined) {
    throw new UsageError('--sub applies only to client credentials (--client-id)');
  }
  if (clientId === undefined && !values.partner && values['auth-url'] !== undefined) {
    throw new UsageError(
      '--auth-url applies only to client credentials (--client-id) and partner accounts (--partner)',
    );
  }
  const sub = values.sub?.trim();
  if (sub !== undefined && !/^\d+$/.test(sub)) {
    throw new UsageError(
      `--sub must be a numeric user id (digits only), got ${JSON.stringify(sub)}`,
    );
  }
  return { clientId, sub };
}

/**
 * The tester of a new account, reaching the API, Redis and the queue as its
 * runs would: loaded only to test (`--no-test` loads none of them).
 */
async function openTester(config: Config, stderr: Output) {
  const [{ probeTester }, { createLogger }] = await Promise.all([
    import('./account-probe.js'),
    import('../../logger.js'),
  ]);
  return probeTester(
    config,
    createLogger({ level: config.logLevel, format: config.logFormat, destination: stderr }),
  );
}

/** What `accounts add` says of an account it added. */
function describeAdded(added: AccountInfo): string {
  return `added account ${added.name} (${describeAuthMode(added.authMode)}, schema ${added.schema}); it syncs with the next 'hiresync sync' or worker`;
}
