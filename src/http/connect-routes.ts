import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import { AccountStore } from '../accounts/account-store.js';
import {
  CALLBACK_PATH,
  CONNECT_PATH,
  checkLinkedAccount,
  connectRedirectUri,
} from '../accounts/connect-links.js';
import {
  type ClaimedLink,
  claimConnectState,
  openConnectLink,
  STATE_TTL_MS,
  useConnectLink,
} from '../accounts/connect-states.js';
import {
  type NewPartnerAccount,
  type PartnerAuthorization,
  savePartnerAuthorization,
} from '../accounts/partner-authorization.js';
import { AccountNotReadyError, StoredDataError } from '../accounts/register-account.js';
import { isUndefinedTable } from '../accounts/stored-account.js';
import { authorizeRequestUrl } from '../api/authorization-request.js';
import { exchangeCode } from '../api/exchange-code.js';
import { createHttp } from '../api/http.js';
import { authUrlSetting } from '../api/url-setting.js';
import type { SecretKeys } from '../config/secret-keys.js';
import type { PartnerConfig } from '../config/types.js';
import { coerceError, HiresyncError } from '../errors.js';
import type { Logger } from '../logger.js';
import { redactSecrets, registerSecret } from '../secret.js';
import type { Database } from '../warehouse/tables.js';
import {
  browserNonceHash,
  type ConnectCookieOptions,
  connectCookie,
  expiredConnectCookie,
  newBrowserNonce,
  readBrowserNonce,
} from './connect-cookie.js';
import {
  connectedPage,
  connectFailedPage,
  INTERNAL_ERROR_PAGE,
  linkRefusedPage,
  METHOD_NOT_ALLOWED_PAGE,
  malformedAnswerPage,
  NOT_MIGRATED_PAGE,
  stateRefusedPage,
  storedDataPage,
  vendorErrorPage,
} from './connect-messages.js';
import { type ConnectPage, sendPage, sendRedirect } from './connect-pages.js';

/** Options of {@link connectRoutes}. */
export interface ConnectRoutesOptions {
  /** The pool holding hiresync.connect_links, the accounts and their schemas. */
  db: Kysely<Database>;
  /** HIRESYNC_PUBLIC_URL: the redirect URI is it + `/oauth/callback`; its path, if any, prefixes the routes. */
  publicUrl: string;
  /** HIRESYNC_SECRET_KEY: links signed with any of its keys open; refresh tokens are sealed with the first. */
  secretKeys: SecretKeys;
  /** The partner app whose authorization the links ask for. */
  partner: PartnerConfig;
  /** The authorize endpoint for an account whose token service is `authUrl` (HIRESYNC_AUTHORIZE_URL, else `authUrl/authorize`). */
  authorizeEndpoint: (authUrl: string) => string;
  logger: Logger;
  /** Told once an account is connected (and enabled): schedule its runs now. Failures are logged. */
  onConnected?: ((account: string) => Promise<unknown>) | undefined;
  /** Timeout of the code exchange's request. Default 30 s. */
  exchangeTimeoutMs?: number;
  /** Lifetime of a state. Default 15 minutes. */
  stateTtlMs?: number;
}

/** What a step answers: a page or a redirect, and the cookie to set with it, if any. */
type Outcome = (ConnectPage | { redirect: string }) & { setCookie?: string };

/** Postgres's undefined_column: the control schema predates a migration of connect links (0014). */
function isUndefinedColumn(error: unknown): boolean {
  return (error as { code?: unknown }).code === '42703';
}

/** An account connected; `unfinished`: why its schema is not ready (the token stored all the same). */
type Connected = PartnerAuthorization & { unfinished?: string };

/** A route of the worker's HTTP server: true when it answered the request. */
export type HttpRoute = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/** Thrown inside the link's transaction: a page to answer, the link left unused. */
class ConnectRefusal extends HiresyncError {
  constructor(readonly page: ConnectPage) {
    super(page.title);
  }
}

/**
 * The routes of connect links, on the worker's HTTP server (no password: the
 * link's signature and the OAuth state authenticate each step):
 *
 * - `GET /connect/<token>`: checks the link (signature, then Postgres: known,
 *   unused, not withdrawn, unexpired), stores a fresh state bound to this
 *   browser (the hash of a nonce cookie it sets, connect-cookie.ts) with a
 *   sealed PKCE verifier, and redirects to the authorize endpoint
 *   (`response_type=code`, `client_id`, `redirect_uri`, `state`,
 *   `code_challenge` with `code_challenge_method=S256`, `scope` when set);
 * - `GET /oauth/callback?code&state`: claims the state (single use), refuses
 *   it unless the browser sends the opening's cookie back, and holding the
 *   link's row lock exchanges the code (with the verifier) at once, stores the
 *   refresh token sealed (registering the account and migrating its schema,
 *   or replacing a registered partner account's token), and marks the link
 *   used (one callback at a time in a process); then tells `onConnected`.
 *
 * Every answer is a plain page saying what happened (see connect-messages.ts);
 * a refusal or failure changes nothing but the state it consumed. The
 * redirect URI comes from HIRESYNC_PUBLIC_URL alone, never from the request's
 * Host or X-Forwarded-* headers.
 */
export function connectRoutes(options: ConnectRoutesOptions): HttpRoute {
  const prefix = new URL(options.publicUrl).pathname.replace(/\/+$/, '');
  const redirectUri = connectRedirectUri(options.publicUrl);
  const exchangeTimeoutMs = options.exchangeTimeoutMs ?? 30_000;
  const http = createHttp({ timeoutMs: exchangeTimeoutMs });
  const keys = options.secretKeys.reveal();
  const { logger } = options;
  const stateTtlMs = options.stateTtlMs ?? STATE_TTL_MS;
  const cookieOptions: ConnectCookieOptions = {
    publicUrl: options.publicUrl,
    maxAgeMs: stateTtlMs,
  };
  // One link transaction at a time in this process: each holds a connection
  // of the pool (the link's row lock) while its exchange and registration
  // take others from the same pool, so as many callbacks at once as the pool
  // has connections would wait for each other for good.
  let turn: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const run = turn.then(work, work);
    turn = run.catch(() => undefined);
    return run;
  };

  /** The request's path below the public URL's own path (a proxy may strip it or pass it on). */
  const localPath = (pathname: string) =>
    prefix !== '' && pathname.startsWith(`${prefix}/`) ? pathname.slice(prefix.length) : pathname;

  const answer = async (
    req: IncomingMessage,
    res: ServerResponse,
    step: () => Promise<Outcome>,
  ) => {
    if (req.method !== 'GET') {
      res.setHeader('allow', 'GET');
      return sendPage(res, METHOD_NOT_ALLOWED_PAGE);
    }
    let outcome: Outcome;
    try {
      outcome = await step();
    } catch (error) {
      if (isUndefinedTable(error) || isUndefinedColumn(error)) {
        outcome = NOT_MIGRATED_PAGE;
      } else {
        logger.error({ err: coerceError(error) }, 'connect link step failed');
        outcome = INTERNAL_ERROR_PAGE;
      }
    }
    if ('redirect' in outcome) sendRedirect(res, outcome.redirect, outcome.setCookie);
    else sendPage(res, outcome, outcome.setCookie);
  };

  const open = async (token: string): Promise<Outcome> => {
    const nonce = newBrowserNonce();
    const opened = await openConnectLink(
      options.db,
      token,
      keys,
      { browserHash: browserNonceHash(nonce) },
      stateTtlMs,
    );
    if (!opened.ok) {
      const { refusal } = opened;
      logger.info(
        { account: 'account' in refusal ? refusal.account : undefined, refused: refusal.kind },
        'connect link refused',
      );
      return linkRefusedPage(refusal);
    }
    const { account, authUrl, state, codeChallenge } = opened.link;
    registerSecret(state);
    registerSecret(nonce);
    logger.info({ account }, 'connect link opened: redirecting to the authorize endpoint');
    return {
      redirect: authorizeRequestUrl(options.authorizeEndpoint(authUrl), {
        clientId: options.partner.clientId,
        redirectUri,
        state,
        scope: options.partner.scope,
        codeChallenge,
      }),
      setCookie: connectCookie(state, nonce, cookieOptions),
    };
  };

  const callback = async (req: IncomingMessage, query: URLSearchParams): Promise<Outcome> => {
    const states = query.getAll('state');
    const state = states[0];
    if (states.length !== 1 || state === undefined || state === '') {
      return stateRefusedPage({ kind: 'unknown state' });
    }
    const nonce = readBrowserNonce(req, state);
    const claimed = await claimConnectState(
      options.db,
      state,
      nonce === undefined ? undefined : browserNonceHash(nonce),
      keys,
    );
    // The state is spent or useless from here on: its cookie goes.
    const setCookie = expiredConnectCookie(state, cookieOptions);
    if (!claimed.ok) {
      const { refusal } = claimed;
      logger.info(
        { account: 'account' in refusal ? refusal.account : undefined, refused: refusal.kind },
        'connect callback refused',
      );
      return { ...stateRefusedPage(refusal), setCookie };
    }
    return { ...(await answerClaimed(claimed.link, query)), setCookie };
  };

  /** The callback of a state claimed: the vendor's error, or the code redeemed. */
  const answerClaimed = async (link: ClaimedLink, query: URLSearchParams): Promise<ConnectPage> => {
    const errors = query.getAll('error');
    const codes = query.getAll('code');
    if (errors.length > 1 || codes.length > 1) {
      return malformedAnswerPage(link.account, 'it carries code or error more than once');
    }
    const error = errors[0];
    if (error !== undefined) {
      logger.info({ account: link.account, error }, 'connect callback: authorization refused');
      return vendorErrorPage(link.account, error, query.get('error_description') ?? undefined);
    }
    const code = codes[0];
    if (code === undefined || code === '') {
      return malformedAnswerPage(link.account, 'it carries neither a code nor an error');
    }
    registerSecret(code);
    return redeem(link, code);
  };

  const redeem = async (link: ClaimedLink, code: string): Promise<ConnectPage> => {
    const { account: name } = link;
    let used: Awaited<ReturnType<typeof useConnectLink<Connected>>>;
    try {
      used = await inTurn(() => useConnectLink(options.db, link, () => connect(link, code)));
    } catch (error) {
      if (error instanceof ConnectRefusal) return error.page;
      if (isUndefinedTable(error) || isUndefinedColumn(error)) throw error;
      const failure = coerceError(error);
      logger.warn(
        { account: name, err: failure },
        'connect callback: the account could not be connected',
      );
      return connectFailedPage(name, redactSecrets(failure.message));
    }
    if (!used.ok) return linkRefusedPage(used.refusal);
    const { account, previousState, unfinished } = used.value;
    if (unfinished === undefined) {
      logger.info({ account: name, previousState }, 'account connected through a connect link');
    } else {
      logger.warn(
        { account: name, previousState, unfinished },
        'account connected through a connect link, but its schema is not ready',
      );
    }
    if (account?.state === 'enabled' && options.onConnected) {
      await options.onConnected(name).catch((scheduling: unknown) => {
        logger.warn(
          { account: name, err: coerceError(scheduling) },
          'connected account not scheduled at once; the schedules pick it up within a minute',
        );
      });
    }
    return connectedPage(account, name, previousState, unfinished);
  };

  /** Exchanges the code and stores the token, under the link's row lock. */
  const connect = async (link: ClaimedLink, code: string): Promise<Connected> => {
    const { db, partner } = options;
    const name = link.account;
    const store = new AccountStore(db, options.secretKeys, { partner });
    const existing = await store.get(name);
    let register: NewPartnerAccount | undefined;
    let authUrl: string;
    if (existing) {
      if (existing.authMode !== 'partner' || existing.authUrl === null) {
        throw new ConnectRefusal(linkRefusedPage({ kind: 'not partner', account: name }));
      }
      authUrl = existing.authUrl;
    } else {
      if (link.baseUrl === null || link.authUrl === null) {
        throw new ConnectRefusal(linkRefusedPage({ kind: 'removed', account: name }));
      }
      const owner = await checkLinkedAccount(db, store, link.id, name).catch((error: unknown) => {
        if (!(error instanceof StoredDataError)) throw error;
        // The counts are the operator's to see, not the link holder's.
        logger.warn({ account: name, err: error }, 'connect callback refused: data stored');
        throw new ConnectRefusal(storedDataPage(name));
      });
      authUrl = link.authUrl;
      register = { baseUrl: link.baseUrl, authUrl, owner };
    }
    const refreshToken = await exchangeCode({
      http,
      tokenUrl: `${authUrl}/token`,
      partner,
      code,
      redirectUri,
      codeVerifier: link.codeVerifier,
      logger,
      timeoutMs: exchangeTimeoutMs,
      ...(existing ? { authUrlSetting: authUrlSetting(name) } : {}),
    });
    try {
      return await savePartnerAuthorization(db, store, name, refreshToken, register, (warning) =>
        logger.warn({ account: name, warning }, 'connect callback: warning'),
      );
    } catch (error) {
      if (!(error instanceof AccountNotReadyError)) throw error;
      // The token is stored: the link is used, and the page says what is left to do.
      const account = await store.get(name);
      return { account, previousState: existing?.state, unfinished: error.message };
    }
  };

  return async (req, res) => {
    // A request target no URL parser takes (`//`) is none of these routes.
    const url = URL.parse(req.url ?? '/', 'http://localhost');
    if (url === null) return false;
    const path = localPath(url.pathname);
    if (path.startsWith(CONNECT_PATH)) {
      const token = path.slice(CONNECT_PATH.length);
      await answer(req, res, () => open(token));
      return true;
    }
    if (path === CALLBACK_PATH) {
      await answer(req, res, () => callback(req, url.searchParams));
      return true;
    }
    return false;
  };
}
