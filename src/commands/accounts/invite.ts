import {
  createConnectLink,
  MAX_LINK_LIFETIME_MS,
  MIN_LINK_LIFETIME_MS,
  withdrawnNotice,
} from '../../accounts/connect-links.js';
import { loadAccountUrls } from '../../config/account-urls.js';
import { loadAccountsConfig } from '../../config/load-config.js';
import { readPublicUrl } from '../../config/public-url.js';
import type { Env } from '../../config/types.js';
import { parseDuration } from '../../duration.js';
import { ConfigError, type ConfigProblem, collectProblems, UsageError } from '../../errors.js';
import { migrateControl } from '../../warehouse/setup/migrate-all.js';
import { EXIT } from '../command.js';
import type { OptionTable } from '../options.js';
import { openDatabase } from './connections.js';
import { loadPartnerApp } from './partner-app.js';
import { checkAccountName, defineSubcommand } from './subcommand.js';

/** Options of `hiresync accounts invite`. */
export const options = {
  expires: {
    type: 'string',
    value: 'D',
    default: '7d',
    description: 'how long the link stays valid, e.g. 2h or 7d (at most 30d)',
  },
  'base-url': {
    type: 'string',
    value: 'URL',
    description:
      "a new account's {base_url}; https unless loopback (default: HIRESYNC_BASE_URL, else the live service's; a registered account keeps its own)",
  },
  'auth-url': {
    type: 'string',
    value: 'URL',
    description:
      "a new account's token service {auth_url}; https unless loopback (default: HIRESYNC_AUTH_URL, else the live service's; a registered account keeps its own)",
  },
  'reuse-data': {
    type: 'boolean',
    description:
      'a new account whose name has rows of an earlier registration stored: the same customer is back, and the link connects it to them (stored with the link)',
  },
} as const satisfies OptionTable;

/** `hiresync accounts invite NAME`: a single-use connect link for the customer's administrator. */
export const invite = defineSubcommand({
  name: 'invite',
  operand: 'NAME',
  description: `Prints a connect link, HIRESYNC_PUBLIC_URL/connect/<token>, to send to the
    administrator of the customer's account. Opening it sends them to the authorize endpoint
    to approve the partner app; the worker behind HIRESYNC_PUBLIC_URL then exchanges the code
    at HIRESYNC_PUBLIC_URL/oauth/callback (the redirect URI to register with the vendor),
    stores the refresh token sealed, registers the account NAME (or replaces the refresh
    token of the registered partner account NAME, which ends needs_reauthorization),
    migrates its schema and schedules its runs. The link works once, only in the browser
    that opened it, and expires after --expires (default 7d, at most 30d); it is signed
    with HIRESYNC_SECRET_KEY and only its hash is stored. A new link withdraws the older
    unused links of NAME (it says how many). Whoever holds it can connect the account:
    send it only to the customer's administrator.

    A new account's name that has rows of an earlier registration stored (it was removed
    without --drop-data) is refused at once, before any link is made (exit 1), naming
    them per table as 'accounts add' does: the link would otherwise show another
    customer's data to whoever connects. Give --reuse-data when the same customer is
    back (the choice is stored with the link, whose callback then registers the account
    over them), or drop them first with 'hiresync accounts remove NAME --drop-data'. A
    link made without it is still refused at its callback should such rows be stored
    by then (the page says the account cannot be connected yet, without the counts;
    the worker's log has them); nothing is registered and the link stays unused.

    Needs DATABASE_URL, HIRESYNC_SECRET_KEY, HIRESYNC_PUBLIC_URL, HIRESYNC_PARTNER_CLIENT_ID
    and HIRESYNC_PARTNER_CLIENT_SECRET; a new account's URLs are --base-url/--auth-url,
    else HIRESYNC_BASE_URL/HIRESYNC_AUTH_URL, else the live service's. Exit 0 when the
    link is made; 1 when NAME is a registered account that is not a partner account, its
    schema is not hiresync's or rows of an earlier registration of NAME are stored
    (without --reuse-data), or Postgres fails; 2 on a usage or configuration error,
    before connecting.`,
  options,
  async execute(values, name, { env, stdout }) {
    checkAccountName(name, 'invited');
    const expiresInMs = parseExpires(values.expires);
    const problems: ConfigProblem[] = [];
    const config = collectProblems(problems, () =>
      loadAccountsConfig(env, { secretKey: 'sign a connect link' }),
    );
    const partner = collectProblems(problems, () => loadPartnerApp(env, 'make a connect link'));
    const { publicUrl, problems: urlProblems } = readPublicUrl(env, 'make a connect link');
    problems.push(...urlProblems);
    const urls = collectProblems(problems, () => newAccountUrls(env, values));
    if (problems.length > 0 || !config || !partner || !publicUrl) throw new ConfigError(problems);
    const db = await openDatabase(config.databaseUrl, 'invite');
    try {
      await migrateControl(db);
      const link = await createConnectLink(db, {
        account: name,
        expiresInMs,
        publicUrl,
        secretKeys: config.secretKeys,
        partner,
        urls,
        reuseData: values['reuse-data'] === true,
      });
      const withdrawn = withdrawnNotice(name, link.withdrawn);
      stdout.write(
        `connect link for account ${name}, single use, valid until ${link.expiresAt.toISOString()}; send it to the customer's administrator only:\n${link.url}\n${withdrawn === undefined ? '' : `${withdrawn}\n`}`,
      );
      return EXIT.ok;
    } finally {
      await db.destroy();
    }
  },
});

/** `--expires`: a duration from 1 minute to 30 days. */
export function parseExpires(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < MIN_LINK_LIFETIME_MS || ms > MAX_LINK_LIFETIME_MS) {
    throw new UsageError(
      `--expires must be a duration from 1m to 30d, such as 2h or 7d, got ${JSON.stringify(text)}`,
    );
  }
  return ms;
}

/**
 * A new account's URLs from --base-url/--auth-url, else the environment's,
 * else the live service's (a registered account keeps its own). A URL given
 * but invalid is a ConfigError.
 */
function newAccountUrls(
  env: Env,
  flags: { 'base-url'?: string | undefined; 'auth-url'?: string | undefined },
): { baseUrl: string; authUrl: string | undefined } {
  return loadAccountUrls(env, { baseUrl: flags['base-url'], authUrl: flags['auth-url'] }, true);
}
