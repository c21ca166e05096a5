import type { Kysely } from 'kysely';
import { authorizeRequestUrl, newState } from '../api/authorization-request.js';
import type { ExchangeCodeOptions } from '../api/exchange-code.js';
import { createHttp } from '../api/http.js';
import { newPkce } from '../api/pkce.js';
import type { PartnerConfig } from '../config/types.js';
import { describeWait, HiresyncError } from '../errors.js';
import { migrateControl } from '../warehouse/setup/migrate-all.js';
import type { Database } from '../warehouse/tables.js';
import type { AccountStore } from './account-store.js';
import {
  type AuthorizationOutcome,
  type AuthorizationTarget,
  completeAuthorization,
} from './complete-authorization.js';
import {
  type CallbackOutcome,
  type CallbackServer,
  listenForCallback,
} from './loopback-callback.js';
import { checkNewAccount } from './register-account.js';
import type { AccountInfo } from './stored-account.js';

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
  signals: { once(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown };
  logger: ExchangeCodeOptions['logger'];
  /** Called once the callback listens: the URL the customer opens, and the callback it returns to. */
  onAuthorizeUrl: (url: string, redirectUri: string) => void;
  /** Called for a callback whose state is not this authorization's (ignored; the wait goes on). */
  onIgnoredCallback?: () => void;
  /** Warnings, such as an account the all_accounts views leave out. */
  warn: (warning: string) => void;
}

/** How a loopback authorization ended. */
export type LoopbackOutcome =
  | Extract<AuthorizationOutcome, { kind: 'authorized' }>
  /** Nothing stored, or (`failed` after the exchange) the account's schema not ready; `error` says which. */
  | {
      kind: 'not authorized';
      reason: 'timeout' | 'interrupted' | 'refused' | 'failed';
      error: Error;
    };

/** Timeout of the code exchange's requests. */
const EXCHANGE_TIMEOUT_MS = 30_000;

/**
 * The authorization code grant of `accounts authorize NAME` (and the demo's
 * partner account): listens on the loopback callback, hands the authorize
 * URL to `onAuthorizeUrl`, waits for the customer's browser to come back, and
 * completes the authorization ({@link completeAuthorization}: the code
 * exchanged once, the sealed refresh token stored; a new account registered
 * and its schema migrated as by `accounts add`, an existing one keeping its
 * data and URLs). Throws a HiresyncError before listening when the account
 * cannot be authorized (not a partner account, other URLs, a name whose
 * earlier data is stored).
 */
export async function authorizePartnerAccount(
  options: AuthorizePartnerAccountOptions,
): Promise<LoopbackOutcome> {
  const target = await targetOf(options);
  const state = newState();
  // PKCE (RFC 7636): a code intercepted on its way back is useless without
  // the verifier, which never leaves this process but for the exchange.
  const pkce = newPkce();
  const ports = {
    ...options,
    http: createHttp({ timeoutMs: EXCHANGE_TIMEOUT_MS }),
    exchangeTimeoutMs: EXCHANGE_TIMEOUT_MS,
  };
  let redirectUri = '';
  let authorized: LoopbackOutcome | undefined;
  const server = await listenForCallback({
    port: options.port,
    state,
    onIgnored: options.onIgnoredCallback,
    redeem: async (code) => {
      const grant = { name: options.name, code, redirectUri, codeVerifier: pkce.verifier };
      const outcome = await completeAuthorization(ports, target, grant);
      if (outcome.kind !== 'authorized') throw outcome.error;
      authorized = outcome;
    },
  });
  redirectUri = server.redirectUri;
  try {
    const authUrl = 'existing' in target ? target.authUrl : target.register.authUrl;
    const url = authorizeRequestUrl(options.authorizeEndpoint(authUrl), {
      clientId: options.partner.clientId,
      redirectUri,
      state,
      scope: options.partner.scope,
      codeChallenge: pkce.challenge,
    });
    options.onAuthorizeUrl(url, redirectUri);
    const outcome = await waitForOutcome(server, options.timeoutMs, options.signals);
    return outcomeOf(options, outcome, authorized);
  } finally {
    await server.close();
  }
}

/** The account the authorization is for, checked before anything listens. */
async function targetOf(options: AuthorizePartnerAccountOptions): Promise<AuthorizationTarget> {
  const { db, store, name, urls } = options;
  await migrateControl(db);
  const existing = await store.get(name);
  if (existing) {
    checkExisting(existing, options.urlFlags ?? {});
    return { existing, authUrl: existing.authUrl ?? urls.authUrl ?? '' };
  }
  const owner = await checkNewAccount(db, store, name, {
    reuseData: options.reuseData,
    retry: `run 'hiresync accounts authorize ${name}' again`,
  });
  return { register: { baseUrl: urls.baseUrl, authUrl: urls.authUrl ?? '', owner } };
}

/** The outcome of the wait, in words for whoever shows it. */
function outcomeOf(
  { name, timeoutMs }: AuthorizePartnerAccountOptions,
  outcome: CallbackOutcome | 'timeout' | 'interrupted',
  authorized: LoopbackOutcome | undefined,
): LoopbackOutcome {
  const not = (
    reason: Extract<LoopbackOutcome, { kind: 'not authorized' }>['reason'],
    why: string,
  ) => ({ kind: 'not authorized', reason, error: new HiresyncError(why) }) as const;
  if (outcome === 'timeout') {
    return not(
      'timeout',
      `no authorization arrived within ${describeWait(timeoutMs)}; run 'hiresync accounts authorize ${name}' again when the customer is ready`,
    );
  }
  if (outcome === 'interrupted') {
    return not('interrupted', 'interrupted before an authorization arrived');
  }
  if (outcome.kind === 'refused') {
    return not(
      'refused',
      `the authorization was refused (${outcome.message}); run 'hiresync accounts authorize ${name}' again`,
    );
  }
  if (outcome.kind === 'failed')
    return { kind: 'not authorized', reason: 'failed', error: outcome.error };
  return authorized ?? { kind: 'authorized', account: undefined, previousState: undefined };
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
  server: Pick<CallbackServer, 'outcome' | 'answered'>,
  timeoutMs: number,
  signals: AuthorizePartnerAccountOptions['signals'],
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
