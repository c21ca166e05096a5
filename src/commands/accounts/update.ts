import { schemaOf } from '../../account-name.js';
import { AccountSettingsStore } from '../../accounts/account-settings-store.js';
import { AccountStore } from '../../accounts/account-store.js';
import type { AccountChange } from '../../accounts/account-update.js';
import { WebhookSecretStore } from '../../accounts/webhook-secrets.js';
import { changesSettings, describeAccountSettings } from '../../config/account-settings.js';
import { parseAccountUrl } from '../../config/account-urls.js';
import { loadAccountsConfig } from '../../config/load-config.js';
import { readPartner } from '../../config/partner.js';
import { webhookSecretProblem } from '../../config/webhook-secret.js';
import { coerceError, UsageError } from '../../errors.js';
import type { RedisTarget } from '../../redis/redis-target.js';
import { Secret } from '../../secret.js';
import { ensureListResources } from '../../warehouse/setup/migrate-all.js';
import { EXIT, type Input, type Output } from '../command.js';
import type { OptionTable } from '../options.js';
import { openDatabase } from './connections.js';
import { readLine } from './read-secret.js';
import { openRedis } from './redis-connection.js';
import { ownListResources, readSettingsOptions, settingsOptions } from './settings-options.js';
import { checkAccountName, defineSubcommand } from './subcommand.js';

/** Options of `hiresync accounts update`. */
export const options = {
  sub: {
    type: 'string',
    value: 'N',
    description: 'client credentials: the numeric user id sent as sub at token time',
  },
  'base-url': {
    type: 'string',
    value: 'URL',
    description: "the account's {base_url}; https unless loopback",
  },
  'auth-url': {
    type: 'string',
    value: 'URL',
    description:
      "client credentials and partner accounts: the token service's {auth_url}; https unless loopback",
  },
  secret: {
    type: 'boolean',
    description:
      'with other options: also read a new client secret, API key or refresh token from standard input (without options it is always read)',
  },
  ...settingsOptions,
  'webhook-secret': {
    type: 'boolean',
    description:
      "read the account's webhook secret (the vendor signs its deliveries with it) from standard input, one line, at least 8 characters",
  },
  'no-webhook-secret': {
    type: 'boolean',
    description: "remove the account's webhook secret: its deliveries are refused (401)",
  },
} as const satisfies OptionTable;

/** `hiresync accounts update NAME`: changes a registered account's credentials in place. */
export const update = defineSubcommand({
  name: 'update',
  operand: 'NAME',
  description: `Changes the stored credentials of the registered account NAME in place: a new
    client secret, API key or (partner account) refresh token, read from standard input
    as 'accounts add' reads it (one line; never from the command line, never printed;
    sealed with HIRESYNC_SECRET_KEY), and --sub N, --base-url URL, --auth-url URL (the
    rules of 'accounts add': --sub for client credentials, --auth-url not for an API
    key, https unless loopback). What is not given stays. Without an option the new
    secret is read from standard input and required there (e.g. printf '%s\\n'
    "$SECRET" | hiresync accounts update acme); with options, standard input is read
    only when --secret is given too, so a loop feeding account names on standard input
    (while read n; do hiresync accounts update "$n" --sub 7; done < list) changes no
    secret and keeps its lines. --resources LIST, --incremental-every D and --full-cron
    CRON give it settings of its own instead of HIRESYNC_RESOURCES,
    HIRESYNC_INCREMENTAL_EVERY and HIRESYNC_FULL_CRON (read as those are; 'default'
    puts the deployment's back); alone they need neither standard input, REDIS_URL nor
    HIRESYNC_SECRET_KEY. Running workers follow a settings change within a minute; its
    runs in flight finish as they are. On a terminal a prompt is printed first (what is typed
    shows). Its data, schema, state and schedules are kept; its cached access token is
    dropped from Redis, so its next run mints a new one with the new credentials, and a
    run in flight resumes with them. A partner account in state needs_reauthorization
    is enabled by a new refresh token only; an account in state credentials_refused
    by a new secret or key (or sub, or token URL).

    --webhook-secret reads the account's webhook secret from standard input instead
    (one line, at least 8 characters; sealed with HIRESYNC_SECRET_KEY; never printed):
    the key the vendor signs its deliveries to HIRESYNC_PUBLIC_URL/webhooks/NAME with.
    --no-webhook-secret removes it: deliveries are refused (401) from then on. Either
    needs DATABASE_URL (and --webhook-secret HIRESYNC_SECRET_KEY) alone, leaves the
    account's version and runs in flight alone, and running workers follow it within
    5 seconds.

    Needs DATABASE_URL, REDIS_URL and HIRESYNC_SECRET_KEY. Exit 0 when updated; 1 when
    no account NAME is registered, the change does not apply to its auth mode, or
    Postgres or Redis fails; 2 on a usage or configuration error (nothing to update, an
    empty standard input with --secret or --webhook-secret, a webhook secret shorter
    than 8 characters, a bad --sub, a URL breaking the https rule, a
    bad setting), before connecting.`,
  options,
  async execute(values, name, { env, stdin, stdout, stderr }) {
    checkAccountName(name, 'updated');
    const sub = values.sub?.trim();
    if (sub !== undefined && !/^\d+$/.test(sub)) {
      throw new UsageError(
        `--sub must be a numeric user id (digits only), got ${JSON.stringify(sub)}`,
      );
    }
    const change: AccountChange = {
      sub,
      baseUrl:
        values['base-url'] === undefined
          ? undefined
          : parseAccountUrl('--base-url', values['base-url']),
      authUrl:
        values['auth-url'] === undefined
          ? undefined
          : parseAccountUrl('--auth-url', values['auth-url']),
    };
    const settings = readSettingsOptions(values);
    const withSettings = changesSettings(settings);
    const webhook = webhookChangeOf(values);
    const given = change.sub ?? change.baseUrl ?? change.authUrl;
    // Settings and webhook secrets alone touch no credential: no secret, no Redis.
    const credentials =
      given !== undefined || values.secret === true || (!withSettings && webhook === undefined);
    const config = loadAccountsConfig(
      env,
      credentials
        ? { redis: true, secretKey: 'seal the credentials of registered accounts' }
        : webhook === 'set'
          ? { secretKey: 'seal the webhook secret of an account' }
          : {},
    );
    // With options, standard input is not touched unless --secret asks for it: it may
    // be a loop's list of names, whose next line must neither become a secret nor be
    // consumed (nor a pipe that never ends be waited on).
    if ((given === undefined && !withSettings && webhook === undefined) || values.secret === true) {
      if (stdin?.isTTY === true) {
        stderr.write(
          `new client secret, API key or refresh token for account ${name} (one line; it shows as typed, so prefer a pipe):\n`,
        );
      }
      const line = await readLine(stdin, 'secret');
      if (line === '') {
        throw new UsageError(
          given === undefined
            ? `nothing to update for account ${name}: pipe its new client secret, API key or refresh token on standard input (one line; it is never taken from the command line), or give --sub, --base-url, --auth-url, --resources, --incremental-every, --full-cron, --webhook-secret or --no-webhook-secret`
            : `--secret: no new secret for account ${name} on standard input: pipe it in, one line (it is never taken from the command line)`,
        );
      }
      change.secret = new Secret(line);
    }
    const webhookSecret =
      webhook === 'set' ? await readWebhookSecret(name, stdin, stderr) : undefined;

    const db = await openDatabase(config.databaseUrl, 'update');
    try {
      /** Stores the settings asked for, and says what they are now. */
      const applySettings = async () => {
        const own = await new AccountSettingsStore(db).set(name, settings);
        // The tables of a list resource only this account names: in its schema only.
        const extra = ownListResources(settings);
        if (extra.length > 0) {
          await ensureListResources(db, extra, { refreshViews: false, schema: schemaOf(name) });
        }
        const shown = describeAccountSettings(own);
        stdout.write(
          `updated account ${name}: resources ${shown.resources}, incremental every ${shown.incrementalEvery}, full cron ${shown.fullCron} ("-": the deployment's); running workers follow within a minute, its runs in flight finish as they are\n`,
        );
      };
      /** Sets or removes the webhook secret asked for, and says so. */
      const applyWebhook = async () => {
        if (webhook === undefined) return;
        const secrets = new WebhookSecretStore(db, config.secretKeys);
        if (webhookSecret !== undefined) {
          await secrets.set(name, webhookSecret);
          stdout.write(
            `updated account ${name}: webhook secret set (sealed); give the vendor the same secret and the URL HIRESYNC_PUBLIC_URL/webhooks/${name}; running workers use it within 5 seconds\n`,
          );
        } else {
          const removed = await secrets.remove(name);
          stdout.write(
            removed
              ? `updated account ${name}: webhook secret removed; running workers refuse its deliveries (401) within 5 seconds\n`
              : `account ${name} had no webhook secret; nothing changed\n`,
          );
        }
      };
      if (!credentials) {
        if (withSettings) await applySettings();
        await applyWebhook();
        return EXIT.ok;
      }
      // Reached before anything changes: the cached token is dropped after.
      const redis = await openRedis(config.redis as RedisTarget);
      try {
        // The partner app, when configured: moving a partner account's auth URL needs it.
        const { partner } = readPartner(env);
        const store = new AccountStore(db, config.secretKeys, { partner });
        const outcome = await store.update(name, change);
        const namespaces = [
          ...new Set([outcome.previousNamespace, outcome.account.credentialNamespace]),
        ].filter((ns): ns is string => ns !== null);
        // A token minted with the old credentials must not be used with the new ones.
        try {
          const keys = namespaces.map((ns) => `${config.redisPrefix}:token:${ns}`);
          if (keys.length > 0) await redis.del(...keys);
        } catch (error) {
          stderr.write(
            `hiresync accounts update: warning: its cached access token could not be dropped (${coerceError(error).message}); a token the API refuses is renewed at its first 401\n`,
          );
        }
        const enabled = outcome.account.state === 'enabled';
        const ended =
          enabled && outcome.previousState === 'needs_reauthorization'
            ? '; it no longer needs reauthorization and is enabled'
            : enabled && outcome.previousState === 'credentials_refused'
              ? `; it was in state credentials_refused and is enabled again ('hiresync accounts test ${name}' checks the new credentials)`
              : '';
        stdout.write(
          `updated account ${name}: ${outcome.changed.join(', ')}; its data, schema and schedules are kept, and its next run mints a new access token${ended}\n`,
        );
        if (withSettings) await applySettings();
        await applyWebhook();
        return EXIT.ok;
      } finally {
        redis.disconnect();
      }
    } finally {
      await db.destroy();
    }
  },
});

/** What `--webhook-secret` and `--no-webhook-secret` ask: set, remove, or neither. */
function webhookChangeOf(values: {
  secret?: boolean | undefined;
  'webhook-secret'?: boolean | undefined;
  'no-webhook-secret'?: boolean | undefined;
}): 'set' | 'remove' | undefined {
  if (values['webhook-secret'] && values['no-webhook-secret']) {
    throw new UsageError('--webhook-secret and --no-webhook-secret: give one of them');
  }
  if (values['webhook-secret'] && values.secret) {
    throw new UsageError(
      '--webhook-secret and --secret both read standard input: update the secret and the webhook secret in two commands',
    );
  }
  return values['webhook-secret'] ? 'set' : values['no-webhook-secret'] ? 'remove' : undefined;
}

/**
 * The webhook secret on standard input (one line, as secrets are read),
 * checked before anything connects: empty or too short is a usage error,
 * which never quotes it.
 */
async function readWebhookSecret(
  name: string,
  stdin: Input | undefined,
  stderr: Output,
): Promise<Secret> {
  if (stdin?.isTTY === true) {
    stderr.write(
      `webhook secret for account ${name} (one line; it shows as typed, so prefer a pipe):\n`,
    );
  }
  const line = await readLine(stdin, 'webhook secret');
  if (line === '') {
    throw new UsageError(
      `--webhook-secret: no webhook secret for account ${name} on standard input: pipe it in, one line (it is never taken from the command line)`,
    );
  }
  const problem = webhookSecretProblem(line);
  if (problem) throw new UsageError(`--webhook-secret: ${problem}`);
  return new Secret(line);
}
