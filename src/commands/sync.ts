import { DEFAULT_ACCOUNT, NO_DEFAULT_ACCOUNT } from '../account-name.js';
import { createApp, withResolvedPolicy } from '../app.js';
import { type AccountSettings, effectiveSettings } from '../config/account-settings.js';
import { loadConfig, type ResourceName } from '../config/load-config.js';
import { expandResourceList, resourceNameProblem } from '../config/resource-names.js';
import type { Config } from '../config/types.js';
import { ConfigError, UsageError } from '../errors.js';
import { createLogger } from '../logger.js';
import { accountTargets } from '../queue/account-targets.js';
import { runOnce } from '../queue/run-once.js';
import type { AccountContext } from '../queue/sync-processor.js';
import type { ScheduleTarget } from '../queue/upsert-schedules.js';
import { catalogFor, RESOURCE_NAMES } from '../resources/index.js';
import { checkConnections, confirmRedisDatabase } from '../status/preflight.js';
import type { RunProgress } from '../sync/run-resource.js';
import { parseAccounts, registryOf, resolveAccounts } from './account-options.js';
import { defineCommand, EXIT } from './command.js';
import type { OptionTable } from './options.js';
import { formatRunSummary } from './run-summary-table.js';
import { runWhereReachable } from './sync-token-check.js';
import { shareTerminal } from './terminal.js';

/** Options of `hiresync sync`. */
export const options = {
  full: {
    type: 'boolean',
    description: 'a full run: read every page and mark rows not seen as deleted',
  },
  account: {
    type: 'string',
    value: 'NAME',
    multiple: true,
    description:
      'default (when the environment sets credentials), or a registered account; repeat, or separate with commas (default: every enabled account)',
  },
  resource: {
    type: 'string',
    value: 'NAME',
    multiple: true,
    description: `a resource of HIRESYNC_RESOURCES, or a built-in one (${RESOURCE_NAMES.join(', ')}), or one named in HIRESYNC_RESOURCE_PATHS or in an account's --resources (run for the accounts that name it), or a set of them (@default: the built-in ones; @analytics: the lists the analytics views read); repeat, or separate with commas (default: each account's resources, HIRESYNC_RESOURCES unless its settings name others; both take names and sets, e.g. @default,@analytics,scorecards)`,
  },
  'allow-mass-delete': {
    type: 'boolean',
    description:
      "with --full: confirm a run that would soft-delete more than HIRESYNC_MAX_DELETE_FRACTION of a resource's live rows (without it such a run marks none and fails)",
  },
} as const satisfies OptionTable;

/** The usage error of a `--resource` name that nothing configures. */
function notConfigured(name: string, configured: readonly ResourceName[]): UsageError {
  return new UsageError(
    `--resource ${name} is not a configured resource; HIRESYNC_RESOURCES has ${configured.join(', ')} (add it there or to an account's --resources, or give it a path in HIRESYNC_RESOURCE_PATHS, to sync it)`,
  );
}

/**
 * The resources named by `--resource` (repeated or comma-separated), else
 * `configured` (HIRESYNC_RESOURCES). A name must be configured, built in, or
 * given a path by HIRESYNC_RESOURCE_PATHS (`pathNamed`): anything else (a
 * typo) is a usage error, found before anything connects, unless
 * `accountsMayName`: then a name that can be a resource is taken, to be
 * looked for in the accounts' own settings once they are read.
 */
export function parseResources(
  values: readonly string[] | undefined,
  configured: readonly ResourceName[],
  pathNamed: readonly string[] = [],
  accountsMayName = false,
): ResourceName[] {
  if (!values || values.length === 0) return [...configured];
  const items = values.flatMap((v) => v.split(',')).map((v) => v.trim());
  if (items.some((n) => n === '')) {
    throw new UsageError(
      `--resource was given an empty resource name; choose from ${configured.join(', ')} (HIRESYNC_RESOURCES)`,
    );
  }
  const { names, problems } = expandResourceList(items, RESOURCE_NAMES);
  if (problems.length > 0) throw new UsageError(`--resource: ${problems.join('; ')}`);
  for (const name of names) {
    if (configured.includes(name) || RESOURCE_NAMES.includes(name) || pathNamed.includes(name)) {
      continue;
    }
    const problem = RESOURCE_NAMES.includes(name) ? undefined : resourceNameProblem(name);
    if (problem) throw new UsageError(`--resource: ${problem}`);
    if (!accountsMayName) throw notConfigured(name, configured);
  }
  return names as ResourceName[];
}

/**
 * What `sync` runs: without --resource (`named` undefined), each account's
 * own resources (its settings, else HIRESYNC_RESOURCES); with it, the named
 * resources of each account, but a list resource HIRESYNC_RESOURCES does not
 * name only for the accounts whose settings name it (its tables are theirs
 * alone). Such a name no account to sync names is a usage error.
 */
function syncTargets(
  accounts: readonly string[],
  settings: ReadonlyMap<string, AccountSettings>,
  config: Config,
  named: readonly ResourceName[] | undefined,
): ScheduleTarget[] {
  if (named === undefined) return accountTargets(accounts, settings, config);
  const own = (account: string) => effectiveSettings(config, settings.get(account)).resources;
  const later = named.filter(
    (name) => !config.resources.includes(name) && !RESOURCE_NAMES.includes(name),
  );
  for (const name of later) {
    if (accounts.some((account) => own(account).includes(name))) continue;
    // Named by other accounts' settings, or only given a path: say so, not "give it a path".
    const naming = [...settings]
      .filter(([, s]) => s.resources?.includes(name))
      .map(([account]) => account);
    if (naming.length === 0 && !(name in config.api.resourcePaths)) {
      throw notConfigured(name, config.resources);
    }
    throw new UsageError(
      `--resource ${name} is a list resource HIRESYNC_RESOURCES does not name: it runs only for the accounts whose --resources name it (${naming.length === 0 ? 'none does' : naming.join(', ')}), and no account to sync (${accounts.join(', ')}) does; name such an account with --account, or add ${name} to HIRESYNC_RESOURCES or to an account's --resources ('hiresync accounts update NAME --resources LIST')`,
    );
  }
  return accounts.flatMap((account) =>
    named
      .filter((resource) => !later.includes(resource) || own(account).includes(resource))
      .map((resource) => ({ account, resource })),
  );
}

/** `hiresync sync`: one run of each resource, to the end, through the queue in this process. */
export const sync = defineCommand({
  name: 'sync',
  description: `One run of each named resource (default: each account's resources, set by
    'accounts add|update --resources', else HIRESYNC_RESOURCES; both take names and
    the sets @default and @analytics, e.g. @default,@analytics) of each named account
    (default: default, when the environment sets credentials, and every enabled
    registered account), processed to the end through the queue in this process, up
    to HIRESYNC_CONCURRENCY at once; prints a summary. Exit 0 when every run
    succeeded, 1 when any failed, 2 on a usage or configuration error (among them:
    no account to sync, or --account default without the environment's credentials).`,
  options,
  async execute(values, context) {
    const { env, signals } = context;
    // One terminal for the progress line, the summary and the log lines.
    const { stdout, stderr, terminal } = shareTerminal(context);
    const allowMassDelete = values['allow-mass-delete'] === true;
    if (allowMassDelete && !values.full) {
      throw new UsageError(
        '--allow-mass-delete confirms the deletions of a full run: use it with --full',
      );
    }
    const config = withResolvedPolicy(loadConfig(env, RESOURCE_NAMES));
    // Names only an account's settings may hold are looked for once they are
    // read; without the secret key no registered account can run, so not then.
    const resources = parseResources(
      values.resource,
      config.resources,
      Object.keys(config.api.resourcePaths),
      config.secretKeys !== undefined,
    );
    const named = parseAccounts(values.account);
    if (named?.includes(DEFAULT_ACCOUNT) && config.api.auth === undefined) {
      throw new UsageError(NO_DEFAULT_ACCOUNT);
    }
    if (named?.some((n) => n !== DEFAULT_ACCOUNT) && !config.secretKeys) {
      throw new ConfigError([
        {
          variable: 'HIRESYNC_SECRET_KEY',
          message: 'is required to sync registered accounts (their credentials are sealed with it)',
        },
      ]);
    }
    // Logs go to stderr (JSON, or pretty on a terminal); stdout carries the human summary.
    const logger = createLogger({
      level: config.logLevel,
      format: config.logFormat,
      destination: stderr,
    });
    const interactive = terminal.interactive;
    const progress = new Map<string, RunProgress & { account: string }>();
    const started = Date.now();
    const onProgress = (p: RunProgress & { account: string }) => {
      progress.set(`${p.account}/${p.resource}`, p);
      if (!interactive) return;
      const seconds = (Date.now() - started) / 1000;
      const line = [...progress.values()]
        .map(
          (q) =>
            `${q.account === DEFAULT_ACCOUNT ? '' : `${q.account}/`}${q.resource}: page ${q.pages}, ${q.records} records, ${Math.round(q.records / Math.max(seconds, 0.001))}/s`,
        )
        .join(' | ');
      terminal.progress(line);
    };
    // Before any connection of the app: nothing may be written to a database REDIS_URL does not name.
    await confirmRedisDatabase(config.redis);
    const app = createApp(config, logger, {
      onProgress,
      defaultMetrics: false,
      registry: registryOf(config),
      // Built-in lists and lists given a path, named by --resource beyond HIRESYNC_RESOURCES.
      resources: catalogFor(resources),
    });
    let interrupted = false;
    const stop = () => {
      interrupted = true;
      app.shutdown.abort(new Error('interrupted'));
    };
    signals.once('SIGINT', stop);
    signals.once('SIGTERM', stop);
    try {
      await checkConnections(app.db, app.redis, { prefix: config.redisPrefix, claimPrefix: true });
      // An account's context is read once for the command's own checks (a named
      // account runs; its token service answers); each run reads it again, as
      // the worker's runs do, and sees a change made since.
      const contexts = new Map<string, Promise<AccountContext>>();
      const checkedContextOf = (account: string) => {
        let context = contexts.get(account);
        if (context === undefined) {
          context = app.contextOf(account);
          contexts.set(account, context);
          // A read that failed (Postgres a moment away) is made again by the next check.
          context.catch(() => contexts.delete(account));
        }
        return context;
      };
      const accounts = await resolveAccounts(app, named, config, { resolve: checkedContextOf });
      const targets = syncTargets(
        accounts,
        await app.accountSettings(),
        config,
        values.resource && values.resource.length > 0 ? resources : undefined,
      );
      // An account whose token service cannot be reached is told at once, not after every attempt.
      const outcomes = await runWhereReachable(
        { contextOf: checkedContextOf, logger, concurrency: config.concurrency },
        targets,
        (runnable) => runOnce(app, runnable, values.full ? 'full' : 'auto', { allowMassDelete }),
      );
      terminal.endProgress();
      stdout.write(`${formatRunSummary(outcomes)}\n`);
      if (interrupted) {
        stderr.write(
          'hiresync sync: interrupted; each run resumes from its checkpoint on the next sync or worker start\n',
        );
      }
      return outcomes.every((o) => o.ok) ? EXIT.ok : EXIT.failed;
    } finally {
      terminal.endProgress();
      await app.close();
    }
  },
});
