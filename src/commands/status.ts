import { AccountStore } from '../accounts/account-store.js';
import { loadStatusConfig } from '../config/load-config.js';
import { ConfigError, coerceError, UsageError } from '../errors.js';
import { connectRedis } from '../redis/connect.js';
import { redisConnectionError } from '../redis/tls-failure.js';
import { RESOURCE_NAMES } from '../resources/index.js';
import { redactSecrets } from '../secret.js';
import { checkConnections } from '../status/preflight.js';
import { defaultAccountShown } from '../status/read-status.js';
import { readStatusReport, reportAccounts } from '../status/report.js';
import { createDatabase } from '../warehouse/database.js';
import { parseAccounts } from './account-options.js';
import { defineCommand, EXIT } from './command.js';
import { durationOption } from './number-options.js';
import type { OptionTable } from './options.js';
import { formatStatusDetail } from './status-detail.js';
import { formatHealth } from './status-health.js';
import { formatStatusOverview } from './status-overview.js';
import { formatCheck, formatStatusSummary, statusLayout } from './status-summary.js';

/** Options of `hiresync status`. */
export const options = {
  account: {
    type: 'string',
    value: 'NAME',
    multiple: true,
    description:
      'default (when it exists), or a registered account; repeat, or separate with commas (default: every account); shows its resources',
  },
  verbose: {
    type: 'boolean',
    short: 'v',
    description: 'one line per account and resource, wherever the output goes',
  },
  summary: {
    type: 'boolean',
    description: 'one line per account, wherever the output goes',
  },
  json: {
    type: 'boolean',
    description: 'print one JSON document instead (timestamps ISO 8601 UTC)',
  },
  check: {
    type: 'boolean',
    description:
      'exit 1 when an account that is not disabled has a failed last run, a resource not permitted, or needs re-authorizing, or when this deployment runs workers and none was seen within --max-age; print only that (or the JSON)',
  },
  'max-age': {
    type: 'string',
    value: 'D',
    description:
      'with --check: how long without a worker seen fails it, once the deployment has run one (default 45s: three heartbeat periods)',
  },
  stale: {
    type: 'string',
    value: 'D',
    description:
      'with --check: also fail for each resource whose last success is older than D (such as 6h or 1d)',
  },
} as const satisfies OptionTable;

/** `hiresync status`: each account's and resource's last run, run in flight and pending checkpoint. */
export const status = defineCommand({
  name: 'status',
  description: `Per account its state, and per resource the last run (mode, started, finished,
    pages, records, outcome, error), the last success, and whether a checkpoint is
    pending. The accounts: default when the environment sets its credentials
    (HIRESYNC_CLIENT_ID or HIRESYNC_API_KEY) or it has runs (then its state is 'not
    configured here', as in 'accounts list'), then every registered
    account; the resources: the built-in ones, or an account's own
    ('accounts add|update --resources'), then any other it has runs of. A resource whose last run was answered 403 shows as not permitted,
    with the scope to ask for (harvest:NAME:list) below the table, or, when
    every resource of the account was refused, that its authorizing user is
    most likely not a site administrator. With registered accounts, an account column comes first and a
    disabled account's state shows in its outcome; a partner account that needs
    re-authorizing is named below the table, with why and what to do, and so is
    a typed view (or all_accounts union) that shows null where the records
    hold values: a column an analyst's view keeps from widening or that shows
    no key, or a refresh that could not finish (the column or the cause, the
    object in the way and the command that resolves it), and a
    resource whose last run found the API's clock further from the worker's than
    HIRESYNC_UPDATED_LOOKBACK.

    Layout: in a terminal, with more than one account shown, one line per
    account (state; resources ok, running, failed, not permitted, never run;
    last success; the run in flight), so that it fits the screen; --account
    or -v shows each resource. When standard output is not a terminal (a pipe,
    a file, a script) it prints one line per account and resource, as it
    always has; --summary asks for one line per account there. With more than
    50 accounts and none named, wherever the output goes, an overview
    instead: accounts per state, resources per state, the resources that fail
    and in how many accounts, the accounts that need action, the ten stalest;
    --account NAME, -v or --summary for the lines. --json prints
    one JSON document of the same facts (docs/status.md describes it).

    Below: the workers alive (host:pid, last seen; their heartbeats in Redis),
    the run queue's jobs by state, and the next scheduled run (each resource's
    with one line per resource).

    Needs DATABASE_URL and REDIS_URL. Exit 0; with --check, 1 when an account
    that is not disabled has a failed last run, a resource not permitted or
    needs re-authorizing, when the deployment has run workers but none was
    seen within --max-age (a deployment that never ran one, syncing from cron,
    is not judged), or with --stale D when a resource's last success is older
    than D; 1 when Postgres or Redis cannot be read; 2 for an
    account name that is malformed or not registered.`,
  options,
  async execute(values, { env, stdout, stderr }) {
    if (values.verbose && values.summary) {
      throw new UsageError('hiresync status takes -v/--verbose or --summary, not both');
    }
    const maxAgeMs =
      values['max-age'] === undefined ? undefined : durationOption('max-age', values['max-age']);
    const staleMs = values.stale === undefined ? undefined : durationOption('stale', values.stale);
    const named = parseAccounts(values.account);
    const config = loadStatusConfig(env, RESOURCE_NAMES);
    const db = createDatabase(config.databaseUrl, { max: 2, applicationName: 'hiresync status' });
    // Status reads once: fail fast rather than wait for Redis to come back.
    const redis = connectRedis(config.redis, { maxRetriesPerRequest: 1, failFastMs: 5000 });
    let redisError: Error | undefined;
    redis.on('error', (error: Error) => {
      redisError = error;
    });
    try {
      await checkConnections(db, redis, { prefix: config.redisPrefix }).catch((error: unknown) => {
        // ioredis reports a refused connection as "Connection is closed"; name the real cause.
        if (redisError && /^cannot reach Redis/.test(coerceError(error).message)) {
          throw redisConnectionError(redisError, config.redis);
        }
        throw error;
      });
      const registered = await new AccountStore(db).list();
      // default only where it exists: the environment sets its credentials, or it has run.
      const withDefault = await defaultAccountShown(db, config.defaultAuthMode !== undefined);
      const known = reportAccounts(
        registered,
        withDefault
          ? {
              authMode: config.defaultAuthMode ?? null,
              configured: config.defaultAuthMode !== undefined,
            }
          : undefined,
      );
      const unknown = (named ?? []).filter((n) => !known.some((a) => a.name === n));
      if (unknown.length > 0) {
        stderr.write(
          `hiresync status: no account ${unknown.join(', ')}; see 'hiresync accounts list'\n`,
        );
        return EXIT.usage;
      }
      const accounts = named ? named.flatMap((n) => known.filter((a) => a.name === n)) : known;
      if (accounts.length === 0 && !values.json) {
        stdout.write(
          "no account: the environment sets no credentials and none is registered (see 'hiresync accounts add', or 'hiresync accounts invite' for a partner app's customers)\n",
        );
        return EXIT.ok;
      }
      const report = await readStatusReport(db, redis, config.redisPrefix, accounts, {
        updatedLookbackMs: config.updatedLookbackMs,
        resources: config.resources,
        maxAgeMs,
        staleMs,
      });
      if (values.json) {
        stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } else if (values.check) {
        stdout.write(`${formatCheck(report)}\n`);
      } else {
        const layout = statusLayout({
          terminal: stdout.isTTY === true,
          accounts: accounts.length,
          named: named !== undefined,
          verbose: values.verbose === true,
          summary: values.summary === true,
        });
        const format = {
          overview: formatStatusOverview,
          summary: formatStatusSummary,
          detail: formatStatusDetail,
        }[layout];
        stdout.write(`${format(report)}\n\n${formatHealth(report, layout === 'detail')}\n`);
      }
      return values.check && !report.check.passed ? EXIT.failed : EXIT.ok;
    } catch (error) {
      stderr.write(`hiresync status: ${redactSecrets(coerceError(error).message)}\n`);
      // A Redis TLS that does not verify is configuration, as for every command: exit 2.
      return error instanceof ConfigError ? EXIT.usage : EXIT.failed;
    } finally {
      await db.destroy();
      redis.disconnect();
    }
  },
});
