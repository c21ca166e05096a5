import type { Kysely } from 'kysely';
import { AccountStore } from '../accounts/account-store.js';
import { createConnectLink, DEFAULT_LINK_LIFETIME_MS } from '../accounts/connect-links.js';
import type { App } from '../app.js';
import type { Config, Env } from '../config/types.js';
import type { ConsoleLinks, ConsoleOptions } from '../console/serve-console.js';
import { HiresyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import { readStatusReport, reportAccounts } from '../status/report.js';
import type { Database } from '../warehouse/tables.js';
import { consoleOperations, formTokenSpender, linksUnavailable } from './console-operations.js';

/**
 * The console's connect links: for a registered partner account in state
 * needs_reauthorization only (a link for a new account is `hiresync accounts
 * invite`'s), valid {@link DEFAULT_LINK_LIFETIME_MS}.
 */
function consoleLinks(config: Config, db: Kysely<Database>): ConsoleLinks {
  return {
    unavailable: linksUnavailable(config),
    async create(account) {
      const unavailable = linksUnavailable(config);
      if (unavailable || !config.publicUrl) throw new HiresyncError(unavailable ?? 'no public URL');
      const found = await new AccountStore(db).get(account);
      if (!found) {
        throw new HiresyncError(`no account ${account} is registered`);
      }
      if (found.state !== 'needs_reauthorization') {
        throw new HiresyncError(
          `account ${account} is ${found.state.replaceAll('_', ' ')}, not waiting to be re-authorized: the console makes links only for accounts that need re-authorizing ('hiresync accounts invite ${account}' makes any other)`,
        );
      }
      const link = await createConnectLink(db, {
        account,
        expiresInMs: DEFAULT_LINK_LIFETIME_MS,
        publicUrl: config.publicUrl,
        secretKeys: config.secretKeys,
        partner: config.partner,
      });
      return {
        account,
        url: link.url,
        expiresAt: link.expiresAt.toISOString(),
        withdrawn: link.withdrawn,
      };
    },
  };
}

/**
 * The console of `worker`'s HTTP server, when HIRESYNC_CONSOLE_PASSWORD is
 * set: the status report of `default` and every registered account, read
 * at each page as `status --json` reads it, connect links for the accounts
 * that need re-authorizing, and the other actions (console-operations.ts),
 * `repairSchedules` making an enabled account's schedules at once.
 * Undefined: the console is off.
 */
export function consoleOptionsOf(
  config: Config,
  app: Pick<App, 'db' | 'redis'>,
  logger: Logger,
  worker: { queue: App['queue']; env: Env; repairSchedules: () => Promise<unknown> },
): ConsoleOptions | undefined {
  if (!config.consolePassword) return undefined;
  const consoleLogger = logger.child({ component: 'console' });
  return {
    password: config.consolePassword,
    secretKeys: config.secretKeys?.reveal() ?? [],
    publicUrl: config.publicUrl,
    readReport: async () => {
      const registered = await new AccountStore(app.db).list();
      // default as this worker has it (its schedules, its metrics): when its environment sets credentials.
      const auth = config.api.auth;
      const accounts = reportAccounts(
        registered,
        auth ? { authMode: auth.mode, configured: true } : undefined,
      );
      return readStatusReport(app.db, app.redis, config.redisPrefix, accounts, {
        updatedLookbackMs: config.updatedLookbackMs,
        resources: config.resources,
      });
    },
    links: consoleLinks(config, app.db),
    actions: consoleOperations(config, {
      app: { ...app, queue: worker.queue },
      env: worker.env,
      logger: consoleLogger,
      repairSchedules: worker.repairSchedules,
    }),
    spendFormToken: formTokenSpender(app.redis, config.redisPrefix),
    logger: consoleLogger,
  };
}
