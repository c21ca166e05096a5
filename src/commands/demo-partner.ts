import type { Kysely } from 'kysely';
import { AccountStore } from '../accounts/account-store.js';
import { authorizePartnerAccount } from '../accounts/loopback-authorization.js';
import { loadAccountUrls } from '../config/account-urls.js';
import type { Config, Env } from '../config/types.js';
import { coerceError, HiresyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Database } from '../warehouse/tables.js';
import { authorizeEndpoint } from './accounts/partner-app.js';

/**
 * Connects the partner account `name` as `hiresync accounts authorize NAME
 * --port 0` does (the same operation, accounts/loopback-authorization.ts),
 * with the demo as the customer's browser: it approves the authorize URL at
 * the simulator (as customer NAME) and follows the redirect to the loopback
 * callback; the code is exchanged and the account registered. Nothing is printed (an error says what went
 * wrong, never a code or token).
 */
export async function authorizeInBrowser(
  db: Kysely<Database>,
  config: Config,
  env: Env,
  logger: Logger,
  name: string,
): Promise<void> {
  const partner = config.partner;
  if (!partner) throw new HiresyncError('the demo has no partner app configured');
  const failed = (why: string) =>
    new HiresyncError(`cannot connect the demo's partner account ${name}: ${why}`);
  // SIGINT and SIGTERM never come to it; the demo interrupts it when the browser fails.
  const interrupts: Array<() => void> = [];
  let browser: Promise<unknown> = Promise.resolve(undefined);
  let refused: { error: unknown } | undefined;
  try {
    const outcome = await authorizePartnerAccount({
      db,
      store: new AccountStore(db, config.secretKeys, { partner }),
      name,
      partner,
      urls: loadAccountUrls(env, { baseUrl: undefined, authUrl: undefined }, true),
      authorizeEndpoint: (authUrl) => authorizeEndpoint(env, partner, authUrl),
      port: 0,
      timeoutMs: 30_000,
      signals: { once: (_signal, listener) => interrupts.push(listener) },
      logger,
      onAuthorizeUrl: (url) => {
        browser = approveAndReturn(new URL(url), name).then(
          () => undefined,
          (error: unknown) => {
            for (const interrupt of interrupts) interrupt();
            return error;
          },
        );
      },
      warn: () => {},
    });
    if (outcome.kind === 'not authorized') refused = { error: outcome.error };
  } catch (error) {
    refused = { error };
  }
  // The browser's own failure says best what went wrong.
  const browserError = await browser;
  if (browserError) throw browserError;
  if (refused) throw failed(coerceError(refused.error).message);
}

/**
 * The customer's browser: signs in as `name` at the authorize URL, approves
 * the partner app, and follows the redirect to the loopback callback.
 */
async function approveAndReturn(url: URL, name: string): Promise<void> {
  url.searchParams.set('sim_account', name);
  const approval = await fetch(url, { redirect: 'manual' });
  const location = approval.headers.get('location');
  if (approval.status !== 302 || !location) {
    throw new HiresyncError(
      `cannot connect the demo's partner account ${name}: the authorize endpoint answered ${approval.status} without a redirect`,
    );
  }
  const callback = await fetch(location);
  await callback.arrayBuffer();
}
