import { accountNameProblem, DEFAULT_ACCOUNT } from '../../account-name.js';
import { AccountStore } from '../../accounts/account-store.js';
import { ConfigError, UsageError } from '../../errors.js';
import { createLogger } from '../../logger.js';
import { checkConnections } from '../../status/preflight.js';
import { probePassed } from '../../sync/probe-account.js';
import { EXIT } from '../command.js';
import type { OptionTable } from '../options.js';
import { formatProbe, openProbeApp, probeAccount } from './account-probe.js';
import { describeAuthMode } from './auth-mode.js';
import { loadProbeConfig } from './probe-config.js';
import { defineSubcommand } from './subcommand.js';

/** Options of `hiresync accounts test`: none but --help. */
export const options = {} as const satisfies OptionTable;

/** `hiresync accounts test NAME`: mints a token and reads one page of each resource. */
export const test = defineSubcommand({
  name: 'test',
  operand: 'NAME',
  description: `Tests the credentials of account NAME (a registered account in any state, or
    default, the environment's): mints a new access token with them (a partner
    account: a refresh grant, whose rotated refresh token is stored as its runs store
    it), then reads the first page, of one record, of each of its resources
    (its own, else HIRESYNC_RESOURCES), and prints per resource ok, not permitted
    (scope ...) when the API answers 403 (the credential lacks that list's scope, or its
    user is not a site administrator), or the error, with what to do. No run,
    checkpoint or row of the account's tables is stored; but a credential the token
    service refuses marks an enabled account as a run would (credentials_refused, or a
    partner account's needs_reauthorization), since its runs would fail the same way. Its requests count against the
    account's rate limit like a run's; a failing request is retried twice at most, and
    a rate-limit wait longer than a minute is reported as that resource's error.

    Needs what 'hiresync sync' needs (DATABASE_URL, REDIS_URL, HIRESYNC_SECRET_KEY for a
    registered account, the partner app for a partner account), but not the
    environment's own credentials to test a registered account. Exit 0 when a token
    was minted and every resource answered ok; 1 when no token could be minted, any
    resource is not permitted or failed, no account NAME is registered, or Postgres or
    Redis fails; 2 on a usage or configuration error, before connecting.`,
  options,
  async execute(_values, name, { env, stdout, stderr }) {
    const problem = name === DEFAULT_ACCOUNT ? undefined : accountNameProblem(name);
    if (problem) throw new UsageError(problem);
    if (name !== DEFAULT_ACCOUNT && (env.HIRESYNC_SECRET_KEY ?? '').trim() === '') {
      throw new ConfigError([
        {
          variable: 'HIRESYNC_SECRET_KEY',
          message: `is required to test account ${name} (its credentials are sealed with it)`,
        },
      ]);
    }
    const config = loadProbeConfig(env, name);
    // Logs go to stderr as JSON; stdout carries the outcome.
    const logger = createLogger({
      level: config.logLevel,
      format: config.logFormat,
      destination: stderr,
    });
    const app = await openProbeApp(config, logger, (account, db) =>
      new AccountStore(db, config.secretKeys, { partner: config.partner }).resolve(account, {
        anyState: true,
      }),
    );
    try {
      await checkConnections(app.db, app.redis, { prefix: config.redisPrefix });
      const account = await app.accounts.resolve(name);
      const probe = await probeAccount(app, name);
      stdout.write(`${formatProbe(name, describeAuthMode(account.auth.mode), probe)}\n`);
      return probePassed(probe.token, probe.resources) ? EXIT.ok : EXIT.failed;
    } finally {
      await app.close();
    }
  },
});
