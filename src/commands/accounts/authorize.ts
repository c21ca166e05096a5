import { AccountStore } from '../../accounts/account-store.js';
import { authorizePartnerAccount } from '../../accounts/loopback-authorization.js';
import type { AccountInfo } from '../../accounts/stored-account.js';
import { loadAccountUrls } from '../../config/account-urls.js';
import { MAX_TIMER_MS } from '../../config/fields.js';
import { loadAccountsConfig } from '../../config/load-config.js';
import { parseDuration } from '../../duration.js';
import {
  ConfigError,
  type ConfigProblem,
  collectProblems,
  describeWait,
  UsageError,
} from '../../errors.js';
import { createLogger } from '../../logger.js';
import { EXIT } from '../command.js';
import type { OptionTable } from '../options.js';
import { openDatabase } from './connections.js';
import { authorizeEndpoint, loadPartnerApp } from './partner-app.js';
import { checkAccountName, defineSubcommand } from './subcommand.js';

/** Options of `hiresync accounts authorize`. */
export const options = {
  port: {
    type: 'string',
    value: 'P',
    default: '8976',
    description: 'port of the callback http://127.0.0.1:P/callback (0: any free port)',
  },
  timeout: {
    type: 'string',
    value: 'D',
    default: '10m',
    description: 'how long to wait for the browser to come back, e.g. 10m',
  },
  'base-url': {
    type: 'string',
    value: 'URL',
    description:
      "a new account's {base_url}; https unless loopback (default: HIRESYNC_BASE_URL, else the live service's)",
  },
  'auth-url': {
    type: 'string',
    value: 'URL',
    description:
      "a new account's token service {auth_url}; https unless loopback (default: HIRESYNC_AUTH_URL, else the live service's)",
  },
  'reuse-data': {
    type: 'boolean',
    description:
      'a new account whose name has rows of an earlier registration stored: the same customer is back, show them its data again',
  },
} as const satisfies OptionTable;

/** `hiresync accounts authorize NAME`: the authorization code grant, through the browser. */
export const authorize = defineSubcommand({
  name: 'authorize',
  operand: 'NAME',
  description: `Connects the partner account NAME (authorization code grant), or reconnects one
    in state needs_reauthorization. Prints the authorize URL (HIRESYNC_AUTHORIZE_URL, default
    the account's {auth_url}/authorize) with response_type=code, the partner app's client_id,
    redirect_uri=http://127.0.0.1:P/callback, a random state, a PKCE code_challenge
    (S256), and HIRESYNC_PARTNER_SCOPE when set; the customer opens it and approves. It listens on 127.0.0.1:P only; a
    callback whose state differs is answered 400 and ignored. The code is exchanged at
    {auth_url}/token (grant_type=authorization_code, its code_verifier, the partner app by
    HTTP Basic) and
    the refresh token stored sealed with HIRESYNC_SECRET_KEY. A new account is registered
    and its schema migrated as by 'accounts add'; an existing one keeps its data, URLs
    and schema, and is enabled again if it needed reauthorization (a disabled one stays
    disabled). A new account whose name has rows of an earlier registration stored (removed
    without --drop-data) is refused before the URL is printed, as by 'accounts add',
    unless --reuse-data. The code and the tokens are never printed. For an administrator whose
    browser cannot reach this host, send a link from 'hiresync accounts invite NAME'.

    Needs DATABASE_URL, HIRESYNC_SECRET_KEY, HIRESYNC_PARTNER_CLIENT_ID and
    HIRESYNC_PARTNER_CLIENT_SECRET; a new account's URLs are --base-url/--auth-url, else
    HIRESYNC_BASE_URL/HIRESYNC_AUTH_URL, else the live service's. Exit 0 when authorized; 1 when the authorization
    is refused, the code cannot be exchanged, NAME is not a partner account, rows of
    an earlier registration of NAME are stored (without --reuse-data), nothing
    arrives within --timeout, or Postgres fails; 2 on a usage or configuration error,
    before connecting.`,
  options,
  async execute(values, name, { env, stdout, stderr, signals }) {
    checkAccountName(name, 'authorized');
    const port = parsePort(values.port);
    const timeoutMs = parseTimeout(values.timeout);
    const problems: ConfigProblem[] = [];
    const config = collectProblems(problems, () =>
      loadAccountsConfig(env, { secretKey: 'seal the refresh token of a partner account' }),
    );
    const partner = collectProblems(problems, () =>
      loadPartnerApp(env, 'authorize a partner account'),
    );
    const urls = collectProblems(problems, () =>
      loadAccountUrls(env, { baseUrl: values['base-url'], authUrl: values['auth-url'] }, true),
    );
    if (problems.length > 0 || !config || !partner || !urls) throw new ConfigError(problems);
    const logger = createLogger({
      level: config.logLevel,
      format: config.logFormat,
      destination: stderr,
    });
    const db = await openDatabase(config.databaseUrl, 'authorize');
    try {
      const outcome = await authorizePartnerAccount({
        db,
        store: new AccountStore(db, config.secretKeys, { partner }),
        name,
        partner,
        urls,
        urlFlags: values,
        reuseData: values['reuse-data'] === true,
        authorizeEndpoint: (authUrl) => authorizeEndpoint(env, partner, authUrl),
        port,
        timeoutMs,
        signals,
        logger,
        onAuthorizeUrl: (url, redirectUri) =>
          stdout.write(
            `open this URL in a browser to authorize the partner app for account ${name} (waiting up to ${describeWait(timeoutMs)} for ${redirectUri}):\n${url}\n`,
          ),
        onIgnoredCallback: () =>
          stderr.write(
            'hiresync accounts authorize: ignored a callback whose state does not match this authorization; still waiting\n',
          ),
        warn: (warning) => stderr.write(`hiresync accounts authorize: warning: ${warning}\n`),
      });
      if (outcome.kind === 'not authorized') throw outcome.error;
      stdout.write(
        `authorized account ${name}${afterword(outcome.account, outcome.previousState)}\n`,
      );
      return EXIT.ok;
    } finally {
      await db.destroy();
    }
  },
});

/** `--port`: 0 to 65535 (0: any free port). */
export function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text.trim()) || port > 65535) {
    throw new UsageError(
      `--port must be a port number from 0 to 65535, got ${JSON.stringify(text)}`,
    );
  }
  return port;
}

/** `--timeout`: a duration such as 10m, at most what a timer holds (about 24 days). */
export function parseTimeout(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms > MAX_TIMER_MS) {
    throw new UsageError(
      `--timeout must be a duration like 90s, 10m or 1h (at most 24d), got ${JSON.stringify(text)}`,
    );
  }
  return ms;
}

/** What follows "authorized account NAME": what the account does next. */
function afterword(
  account: AccountInfo | undefined,
  previous: AccountInfo['state'] | undefined,
): string {
  if (!account) return '';
  if (account.state === 'disabled') {
    return `; it stays disabled ('hiresync accounts enable ${account.name}' syncs it again)`;
  }
  const again = previous === 'needs_reauthorization' ? ' again' : '';
  return ` (partner authorization, schema ${account.schema}); it syncs${again} with the next 'hiresync sync' or worker`;
}
