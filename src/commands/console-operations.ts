/**
 * The console's actions as the worker carries them out: each is the
 * operation of the command it names (`accounts invite`, `disable`, `enable`,
 * `test`), the withdrawal a new link makes, and the run a webhook queues.
 */
import { createHash } from 'node:crypto';
import { DEFAULT_ACCOUNT, NO_DEFAULT_ACCOUNT, registeredAccountProblem } from '../account-name.js';
import { removeAccountSchedulers } from '../accounts/account-keys.js';
import { accountResources } from '../accounts/account-resources.js';
import { AccountStore } from '../accounts/account-store.js';
import {
  createConnectLink,
  DEFAULT_LINK_LIFETIME_MS,
  listPendingLinks,
  withdrawConnectLink,
} from '../accounts/connect-links.js';
import type { App } from '../app.js';
import { loadAccountUrls } from '../config/account-urls.js';
import type { Config, Env } from '../config/types.js';
import type { AccountTest, ConsoleActions } from '../console/action-ports.js';
import { FORM_TOKEN_TTL_MS } from '../console/form-token.js';
import { coerceError, HiresyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import { enqueueConsoleRun } from '../queue/console-runs.js';
import { redactSecrets } from '../secret.js';
import { probePassed } from '../sync/probe-account.js';
import { openProbeApp, probeAccount } from './accounts/account-probe.js';
import { describeAuthMode } from './accounts/auth-mode.js';

/** How long a spent form token is remembered: its life, and the leeway of other hosts' clocks. */
const SPENT_TOKEN_TTL_MS = FORM_TOKEN_TTL_MS + 5 * 60_000;

/** What keeps this deployment from making connect links (what to set), or undefined. */
export function linksUnavailable(config: Config): string | undefined {
  const missing = [
    !config.partner && 'HIRESYNC_PARTNER_CLIENT_ID and HIRESYNC_PARTNER_CLIENT_SECRET',
    !config.publicUrl && 'HIRESYNC_PUBLIC_URL',
    !config.secretKeys && 'HIRESYNC_SECRET_KEY',
  ].filter((m): m is string => typeof m === 'string');
  return missing.length === 0 ? undefined : `set ${missing.join(', ')} on the workers`;
}

/** A new account's URLs, as `accounts invite` takes them without flags: HIRESYNC_BASE_URL and HIRESYNC_AUTH_URL. */
function newAccountUrls(env: Env): { baseUrl: string; authUrl: string } | string {
  try {
    const urls = loadAccountUrls(env, { baseUrl: undefined, authUrl: undefined }, true);
    if (urls.authUrl !== undefined) return { baseUrl: urls.baseUrl, authUrl: urls.authUrl };
  } catch {
    // Named below.
  }
  return "set HIRESYNC_BASE_URL and HIRESYNC_AUTH_URL on the workers (a new account's URLs), or use 'hiresync accounts invite NAME --base-url URL --auth-url URL'";
}

/** A test's outcome for a page: `accounts test`'s lines, redacted. */
async function testAccount(config: Config, logger: Logger, name: string): Promise<AccountTest> {
  // The app `accounts test` opens: pages of one record, two retries, a minute's wait at most.
  const app = await openProbeApp(config, logger, (account, db) =>
    new AccountStore(db, config.secretKeys, { partner: config.partner }).resolve(account, {
      anyState: true,
    }),
  );
  try {
    const account = await app.accounts.resolve(name);
    const probe = await probeAccount(app, name);
    const mode = describeAuthMode(account.auth.mode);
    return {
      passed: probePassed(probe.token, probe.resources),
      token: redactSecrets(
        probe.token.ok
          ? `${name} (${mode}): access token minted`
          : `${name} (${mode}): no access token could be minted with its credentials: ${probe.token.error}`,
      ),
      resources: probe.resources.map((r) => ({
        resource: r.resource,
        outcome:
          r.outcome === 'ok'
            ? 'ok'
            : r.outcome === 'not_permitted'
              ? `not permitted (scope ${r.scope})`
              : 'failed',
        detail: r.outcome === 'ok' ? undefined : redactSecrets(r.error),
      })),
    };
  } finally {
    await app.close();
  }
}

/** What the console's actions run on: the worker's app, its environment, and how to make schedules now. */
export interface ConsoleOperationsOptions {
  app: Pick<App, 'db' | 'redis' | 'queue'>;
  env: Env;
  logger: Logger;
  /** Makes the schedules an enabled account misses now (the worker's schedule keeper), not at its next check. */
  repairSchedules: () => Promise<unknown>;
}

/** The console's actions of a worker of `config`. */
export function consoleOperations(
  config: Config,
  { app, env, logger, repairSchedules }: ConsoleOperationsOptions,
): ConsoleActions {
  const store = new AccountStore(app.db);
  const urls = newAccountUrls(env);
  const inviteUnavailable =
    linksUnavailable(config) ?? (typeof urls === 'string' ? urls : undefined);
  const registered = (name: string, verb: string) => {
    const problem = registeredAccountProblem(name, verb);
    if (problem) throw new HiresyncError(problem);
  };
  return {
    pendingLinks: () => listPendingLinks(app.db),
    inviteUnavailable,
    async invite(account) {
      if (inviteUnavailable || !config.publicUrl || typeof urls === 'string') {
        throw new HiresyncError(inviteUnavailable ?? 'no public URL');
      }
      registered(account, 'invited');
      if (await store.get(account)) {
        throw new HiresyncError(
          `account ${account} is registered already: a new customer needs a name of its own (a registered partner account that needs re-authorizing has its button in its section; 'hiresync accounts invite ${account}' makes any other link)`,
        );
      }
      const link = await createConnectLink(app.db, {
        account,
        expiresInMs: DEFAULT_LINK_LIFETIME_MS,
        publicUrl: config.publicUrl,
        secretKeys: config.secretKeys,
        partner: config.partner,
        urls,
      });
      return {
        account,
        url: link.url,
        expiresAt: link.expiresAt.toISOString(),
        withdrawn: link.withdrawn,
      };
    },
    withdrawLink: (account, id) => withdrawConnectLink(app.db, account, id),
    async syncNow(account, resource) {
      if (account === DEFAULT_ACCOUNT) {
        if (!config.api.auth) throw new HiresyncError(NO_DEFAULT_ACCOUNT);
      } else {
        registered(account, 'synced');
        const found = await store.get(account);
        if (!found) throw new HiresyncError(`no account ${account} is registered`);
        if (found.state !== 'enabled') {
          throw new HiresyncError(
            `account ${account} is ${found.state.replaceAll('_', ' ')}: its runs are skipped until it is enabled, so no run was queued`,
          );
        }
      }
      const resources: readonly string[] = await accountResources(app.db, config, {
        name: account,
      });
      if (!resources.includes(resource)) {
        throw new HiresyncError(
          `account ${account} does not sync ${JSON.stringify(resource.slice(0, 60))} (its resources: ${resources.join(', ')}), so no run was queued`,
        );
      }
      return enqueueConsoleRun(app.queue, account, resource, config);
    },
    async setEnabled(account, enabled) {
      registered(account, enabled ? 'enabled' : 'disabled');
      const { changed } = await store.setState(account, enabled ? 'enabled' : 'disabled');
      if (enabled) {
        // As a connected account's: its schedules now, not at the keeper's next check.
        await repairSchedules().catch((error: unknown) =>
          logger.warn({ err: coerceError(error), account }, 'schedules not made yet'),
        );
        return { changed, schedulersRemoved: 0 };
      }
      const removed = await removeAccountSchedulers(app.queue, account);
      return { changed, schedulersRemoved: removed.length };
    },
    test: (account) => testAccount(config, logger, account),
  };
}

/** Spends a console form's token in Redis (`<prefix>:console-form:<sha256>`), for every worker: true the first time. */
export function formTokenSpender(
  redis: App['redis'],
  prefix: string,
): (token: string) => Promise<boolean> {
  return async (token) => {
    const key = `${prefix}:console-form:${createHash('sha256').update(token).digest('hex')}`;
    return (await redis.set(key, '1', 'PX', SPENT_TOKEN_TTL_MS, 'NX')) === 'OK';
  };
}
