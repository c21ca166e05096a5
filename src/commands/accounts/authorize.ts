import type { Kysely } from 'kysely';
import { AccountStore } from '../../accounts/account-store.js';
import {
  type PartnerAuthorization,
  savePartnerAuthorization,
} from '../../accounts/partner-authorization.js';
import { checkNewAccount, type FreeSchema } from '../../accounts/register-account.js';
import type { AccountInfo } from '../../accounts/stored-account.js';
import { authorizeRequestUrl, newState } from '../../api/authorization-request.js';
import { exchangeCode } from '../../api/exchange-code.js';
import { createHttp } from '../../api/http.js';
import { newPkce } from '../../api/pkce.js';
import { authUrlSetting } from '../../api/url-setting.js';
import { loadAccountUrls } from '../../config/account-urls.js';
import { MAX_TIMER_MS } from '../../config/fields.js';
import { loadAccountsConfig } from '../../config/load-config.js';
import type { PartnerConfig } from '../../config/types.js';
import { parseDuration } from '../../duration.js';
import {
  ConfigError,
  type ConfigProblem,
  collectProblems,
  describeWait,
  HiresyncError,
  UsageError,
} from '../../errors.js';
import { createLogger, type Logger } from '../../logger.js';
import { migrateControl } from '../../warehouse/setup/migrate-all.js';
import type { Database } from '../../warehouse/tables.js';
import { EXIT, type Signals } from '../command.js';
import type { OptionTable } from '../options.js';
import { type CallbackOutcome, listenForCallback } from './callback-server.js';
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
    description: "a new account's {base_url}; https unless loopback (default: HIRESYNC_BASE_URL)",
  },
  'auth-url': {
    type: 'string',
    value: 'URL',
    description:
      "a new account's token service {auth_url}; https unless loopback (default: HIRESYNC_AUTH_URL)",
  },
  'reuse-data': {
    type: 'boolean',
    description:
      'a new account whose name has rows of an earlier registration stored: the same customer is back, show them its data again',
  },
} as const satisfies OptionTable;

/** Timeout of the code exchange's requests. */
const EXCHANGE_TIMEOUT_MS = 30_000;

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
    HIRESYNC_PARTNER_CLIENT_SECRET, and --base-url/--auth-url or
    HIRESYNC_BASE_URL/HIRESYNC_AUTH_URL. Exit 0 when authorized; 1 when the authorization
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
    const logger = createLogger({ level: config.logLevel, destination: stderr });
    const db = await openDatabase(config.databaseUrl, 'authorize');
    try {
      const { account, previousState } = await authorizePartnerAccount({
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
      stdout.write(`authorized account ${name}${afterword(account, previousState)}\n`);
      return EXIT.ok;
    } finally {
      await db.destroy();
    }
  },
});

/** What {@link authorizePartnerAccount} connects, and where it reports. */
export interface AuthorizePartnerAccountOptions {
  /** The database of hiresync.accounts and the account schemas. */
  db: Kysely<Database>;
  /** The account registry on `db`, with the secret box and the partner app. */
  store: AccountStore;
  /** The account to connect, or to reconnect when it needs reauthorization. */
  name: string;
  partner: PartnerConfig;
  /** A new account's {base_url} and {auth_url}; an existing account keeps its own. */
  urls: { baseUrl: string; authUrl: string | undefined };
  /** --base-url and --auth-url as given: an existing account refuses URLs other than its own. */
  urlFlags?: { 'base-url'?: string | undefined; 'auth-url'?: string | undefined };
  /** A new account: register it even though rows of an earlier registration of its name are stored (--reuse-data). */
  reuseData?: boolean | undefined;
  /** The authorize endpoint of the token service at `authUrl` (see partner-app.ts). */
  authorizeEndpoint: (authUrl: string) => string;
  /** Port of the loopback callback http://127.0.0.1:P/callback (0: any free port). */
  port: number;
  /** How long to wait for the browser to come back. */
  timeoutMs: number;
  /** SIGINT or SIGTERM gives up the wait; a callback being redeemed is waited for. */
  signals: Signals;
  logger: Logger;
  /** Called once the callback listens: the URL the customer opens, and the callback it returns to. */
  onAuthorizeUrl: (url: string, redirectUri: string) => void;
  /** Called for a callback whose state is not this authorization's (ignored; the wait goes on). */
  onIgnoredCallback?: () => void;
  /** Warnings, such as an account the all_accounts views leave out. */
  warn: (warning: string) => void;
}

/**
 * The authorization code grant of `accounts authorize NAME`: listens on the
 * loopback callback, hands the authorize URL to `onAuthorizeUrl`, waits for
 * the customer's browser to come back, exchanges the code (never twice) and
 * stores the sealed refresh token: a new account is registered and its schema
 * migrated as by `accounts add`, an existing one keeps its data and URLs.
 * Throws a HiresyncError when the authorization is refused, the code cannot
 * be exchanged, nothing arrives within `timeoutMs`, or a signal comes first.
 */
export async function authorizePartnerAccount(
  options: AuthorizePartnerAccountOptions,
): Promise<PartnerAuthorization> {
  const { db, store, name, partner, urls, logger, warn } = options;
  await migrateControl(db);
  const existing = await store.get(name);
  let owner: FreeSchema | undefined;
  let authUrl = urls.authUrl ?? '';
  if (existing) {
    checkExisting(existing, options.urlFlags ?? {});
    authUrl = existing.authUrl ?? authUrl;
  } else {
    owner = await checkNewAccount(db, store, name, {
      reuseData: options.reuseData,
      retry: `run 'hiresync accounts authorize ${name}' again`,
    });
  }

  const state = newState();
  // PKCE (RFC 7636): a code intercepted on its way back is useless without
  // the verifier, which never leaves this process but for the exchange.
  const pkce = newPkce();
  let redirectUri = '';
  const http = createHttp({ timeoutMs: EXCHANGE_TIMEOUT_MS });
  let authorized: AccountInfo | undefined;
  let previousState: AccountInfo['state'] | undefined;
  const server = await listenForCallback({
    port: options.port,
    state,
    onIgnored: options.onIgnoredCallback,
    redeem: async (code) => {
      const refreshToken = await exchangeCode({
        http,
        tokenUrl: `${authUrl}/token`,
        partner,
        code,
        redirectUri,
        codeVerifier: pkce.verifier,
        logger,
        timeoutMs: EXCHANGE_TIMEOUT_MS,
        ...(existing ? { authUrlSetting: authUrlSetting(name) } : {}),
      });
      ({ account: authorized, previousState } = await savePartnerAuthorization(
        db,
        store,
        name,
        refreshToken,
        owner === undefined ? undefined : { baseUrl: urls.baseUrl, authUrl, owner },
        warn,
      ));
    },
  });
  redirectUri = server.redirectUri;
  try {
    const url = authorizeRequestUrl(options.authorizeEndpoint(authUrl), {
      clientId: partner.clientId,
      redirectUri,
      state,
      scope: partner.scope,
      codeChallenge: pkce.challenge,
    });
    options.onAuthorizeUrl(url, redirectUri);
    const outcome = await waitForOutcome(server, options.timeoutMs, options.signals);
    if (outcome === 'timeout') {
      throw new HiresyncError(
        `no authorization arrived within ${describeWait(options.timeoutMs)}; run 'hiresync accounts authorize ${name}' again when the customer is ready`,
      );
    }
    if (outcome === 'interrupted') {
      throw new HiresyncError('interrupted before an authorization arrived');
    }
    if (outcome.kind === 'refused') {
      throw new HiresyncError(
        `the authorization was refused (${outcome.message}); run 'hiresync accounts authorize ${name}' again`,
      );
    }
    if (outcome.kind === 'failed') throw outcome.error;
  } finally {
    await server.close();
  }
  return { account: authorized, previousState };
}

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

/**
 * Refuses to authorize an existing account that is not a partner account, or
 * with --base-url/--auth-url other than its own: authorize keeps an account's
 * URLs (its refresh grants go to its own token service).
 */
function checkExisting(
  account: AccountInfo,
  flags: { 'base-url'?: string | undefined; 'auth-url'?: string | undefined },
): void {
  if (account.authMode !== 'partner') {
    throw new HiresyncError(
      `account ${account.name} authenticates with ${account.authMode === 'client_credentials' ? 'client credentials' : 'an API key'}, not partner authorization: 'accounts authorize' applies to partner accounts only (remove it and authorize it again to make it one)`,
    );
  }
  const differs = (given: string | undefined, stored: string | null) =>
    given !== undefined && given.trim().replace(/\/+$/, '') !== stored;
  if (differs(flags['base-url'], account.baseUrl) || differs(flags['auth-url'], account.authUrl)) {
    throw new HiresyncError(
      `account ${account.name} is registered with base URL ${account.baseUrl} and auth URL ${account.authUrl ?? '-'}; 'accounts authorize' keeps them (remove the account and authorize it again to change them)`,
    );
  }
}

/**
 * Waits for the callback's outcome, at most `timeoutMs` or until SIGINT or
 * SIGTERM; a callback being redeemed when either comes is waited for (its
 * token may be stored already).
 */
function waitForOutcome(
  server: { outcome: Promise<CallbackOutcome>; readonly answered: boolean },
  timeoutMs: number,
  signals: { once(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown },
): Promise<CallbackOutcome | 'timeout' | 'interrupted'> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const stop = (reason: 'timeout' | 'interrupted') => {
      if (!server.answered) resolve(reason);
    };
    timer = setTimeout(() => stop('timeout'), timeoutMs);
    signals.once('SIGINT', () => stop('interrupted'));
    signals.once('SIGTERM', () => stop('interrupted'));
    void server.outcome.then((outcome) => {
      clearTimeout(timer);
      timer = undefined;
      resolve(outcome);
    });
  });
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
