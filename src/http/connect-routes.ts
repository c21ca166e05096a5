import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import { connectCallback, isUndefinedColumn } from '../accounts/connect-callback.js';
import { CALLBACK_PATH, CONNECT_PATH, connectRedirectUri } from '../accounts/connect-links.js';
import { openConnectLink, STATE_TTL_MS } from '../accounts/connect-states.js';
import { isUndefinedTable } from '../accounts/stored-account.js';
import { authorizeRequestUrl } from '../api/authorization-request.js';
import { createHttp } from '../api/http.js';
import type { SecretKeys } from '../config/secret-keys.js';
import type { PartnerConfig } from '../config/types.js';
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import { registerSecret } from '../secret.js';
import type { Database } from '../warehouse/tables.js';
import { callbackPage } from './connect-callback-page.js';
import {
  browserNonceHash,
  type ConnectCookieOptions,
  connectCookie,
  expiredConnectCookie,
  newBrowserNonce,
  readBrowserNonce,
} from './connect-cookie.js';
import {
  INTERNAL_ERROR_PAGE,
  linkRefusedPage,
  METHOD_NOT_ALLOWED_PAGE,
  NOT_MIGRATED_PAGE,
  stateRefusedPage,
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

/** A route of the worker's HTTP server: true when it answered the request. */
export type HttpRoute = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

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
  const { logger } = options;
  const stateTtlMs = options.stateTtlMs ?? STATE_TTL_MS;
  const links: Links = {
    ...options,
    redirectUri,
    keys: options.secretKeys.reveal(),
    stateTtlMs,
    cookieOptions: { publicUrl: options.publicUrl, maxAgeMs: stateTtlMs },
    complete: connectCallback({
      db: options.db,
      secretKeys: options.secretKeys,
      partner: options.partner,
      redirectUri,
      http: createHttp({ timeoutMs: exchangeTimeoutMs }),
      logger,
      exchangeTimeoutMs,
      warn: (account, warning) => logger.warn({ account, warning }, 'connect callback: warning'),
      schedule: options.onConnected,
    }),
  };
  /** The request's path below the public URL's own path (a proxy may strip it or pass it on). */
  const localPath = (pathname: string) =>
    prefix !== '' && pathname.startsWith(`${prefix}/`) ? pathname.slice(prefix.length) : pathname;
  return async (req, res) => {
    // A request target no URL parser takes (`//`) is none of these routes.
    const url = URL.parse(req.url ?? '/', 'http://localhost');
    if (url === null) return false;
    const path = localPath(url.pathname);
    if (path.startsWith(CONNECT_PATH)) {
      const token = path.slice(CONNECT_PATH.length);
      await answer(logger, req, res, () => openLink(links, token));
      return true;
    }
    if (path === CALLBACK_PATH) {
      await answer(logger, req, res, () => callback(links, req, url.searchParams));
      return true;
    }
    return false;
  };
}

/** What the steps of the routes share. */
interface Links extends ConnectRoutesOptions {
  redirectUri: string;
  keys: readonly Buffer[];
  stateTtlMs: number;
  cookieOptions: ConnectCookieOptions;
  /** The callback's operation (one at a time in this process). */
  complete: ReturnType<typeof connectCallback>;
}

/** Answers a request with its step's outcome; GET only. */
async function answer(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  step: () => Promise<Outcome>,
): Promise<void> {
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
}

/** `GET /connect/<token>`: a fresh state bound to this browser, and the redirect to the vendor. */
async function openLink(links: Links, token: string): Promise<Outcome> {
  const { logger } = links;
  const nonce = newBrowserNonce();
  const opened = await openConnectLink(
    links.db,
    token,
    links.keys,
    { browserHash: browserNonceHash(nonce) },
    links.stateTtlMs,
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
    redirect: authorizeRequestUrl(links.authorizeEndpoint(authUrl), {
      clientId: links.partner.clientId,
      redirectUri: links.redirectUri,
      state,
      scope: links.partner.scope,
      codeChallenge,
    }),
    setCookie: connectCookie(state, nonce, links.cookieOptions),
  };
}

/** `GET /oauth/callback`: the authorization completed (accounts/connect-callback.ts), as a page. */
async function callback(
  links: Links,
  req: IncomingMessage,
  query: URLSearchParams,
): Promise<Outcome> {
  const states = query.getAll('state');
  const state = states[0];
  if (states.length !== 1 || state === undefined || state === '') {
    return stateRefusedPage({ kind: 'unknown state' });
  }
  const nonce = readBrowserNonce(req, state);
  const outcome = await links.complete({
    state,
    browserHash: nonce === undefined ? undefined : browserNonceHash(nonce),
    codes: query.getAll('code'),
    errors: query.getAll('error'),
    errorDescription: query.get('error_description') ?? undefined,
  });
  // The state is spent or useless from here on: its cookie goes.
  return {
    ...callbackPage(outcome, links.logger),
    setCookie: expiredConnectCookie(state, links.cookieOptions),
  };
}
