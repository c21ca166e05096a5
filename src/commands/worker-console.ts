import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { AccountStore } from '../accounts/account-store.js';
import { createConnectLink, DEFAULT_LINK_LIFETIME_MS } from '../accounts/connect-links.js';
import type { Config } from '../config/types.js';
import type { ConsoleLinks, ConsoleOptions } from '../console/serve-console.js';
import { HiresyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import { readStatusReport, reportAccounts } from '../status/report.js';
import type { Database } from '../warehouse/tables.js';

/** What keeps this deployment from making connect links (what to set), or undefined. */
function linksUnavailable(config: Config): string | undefined {
  const missing = [
    !config.partner && 'HIRESYNC_PARTNER_CLIENT_ID and HIRESYNC_PARTNER_CLIENT_SECRET',
    !config.publicUrl && 'HIRESYNC_PUBLIC_URL',
    !config.secretKeys && 'HIRESYNC_SECRET_KEY',
  ].filter((m): m is string => typeof m === 'string');
  return missing.length === 0 ? undefined : `set ${missing.join(', ')} on the workers`;
}

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
 * at each page as `status --json` reads it, and connect links for the
 * accounts that need re-authorizing. Undefined: the console is off.
 */
export function consoleOptionsOf(
  config: Config,
  app: { db: Kysely<Database>; redis: Redis },
  logger: Logger,
): ConsoleOptions | undefined {
  if (!config.consolePassword) return undefined;
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
    logger: logger.child({ component: 'console' }),
  };
}
