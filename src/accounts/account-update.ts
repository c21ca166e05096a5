/**
 * `accounts update`: a registered account's credentials and URLs changed in
 * place, in one transaction, its data, schema and schedules kept.
 */
import { TokenCipher } from '../api/token-cipher.js';
import { defaultAuthUrlFor, LIVE_AUTH_URL } from '../config/live-defaults.js';
import { HiresyncError } from '../errors.js';
import { Secret } from '../secret.js';
import type { AccountRow } from '../warehouse/tables.js';
import {
  type AccountsContext,
  authConfig,
  lockRefreshes,
  partnerAuth,
  replaceRefreshToken,
  requireBox,
  requirePartner,
  secretPurpose,
} from './account-credentials.js';
import { refreshTokenPurpose } from './refresh-token-vault.js';
import { SecretKeyError } from './secret-box.js';
import {
  type AccountInfo,
  infoOf,
  type NewAccount,
  PUBLIC_COLUMNS,
  type StoredAccountState,
  TOKEN_COLUMNS,
  tokenInfoOf,
  UnknownAccountError,
} from './stored-account.js';

/** What `accounts update` changes of a registered account; what is absent stays. */
export interface AccountChange {
  /** A new client secret, API key, or (partner accounts) refresh token. */
  secret?: Secret | undefined;
  /** A new `sub` (client credentials), digits. */
  sub?: string | undefined;
  /** A new `{base_url}`, validated, without a trailing slash. */
  baseUrl?: string | undefined;
  /** A new `{auth_url}` (client credentials, partner), validated, without a trailing slash. */
  authUrl?: string | undefined;
}

/** What {@link AccountStore.update} did. */
export interface UpdateOutcome {
  account: AccountInfo;
  /** What changed, as people name it (`client secret`, `sub`, `base URL`, ...), in that order. */
  changed: string[];
  /** The credential namespace before: its cached token is to be dropped too. */
  previousNamespace: string | null;
  /**
   * The state before: `needs_reauthorization` is enabled by a new refresh
   * token, `credentials_refused` by a new secret, key, sub or token URL.
   */
  previousState: StoredAccountState;
}

/** An auth mode as messages name it. */
function describeMode(mode: AccountRow['auth_mode']): string {
  return mode === 'client_credentials'
    ? 'client credentials'
    : mode === 'api_key'
      ? 'an API key'
      : 'partner authorization';
}

/**
 * Changes a registered account's credentials in place, in one transaction:
 * a new `secret` (client secret, API key, or a partner account's refresh
 * token), `sub`, `baseUrl`, `authUrl`. Its data, schema, state and
 * schedules are kept; its row's version changes (runs in flight resume with
 * the new settings), and its credential namespace follows the credential.
 * A partner account's new refresh token replaces the old one as
 * {@link authorizePartner} stores it, enabling an account in state
 * `needs_reauthorization` (nothing else does); a new secret or key (or sub,
 * or token endpoint) of another account enables it from state
 * `credentials_refused`. Waits, as authorize does,
 * for a refresh in progress to end. Throws UnknownAccountError,
 * HiresyncError for a change its auth mode does not have (a sub without
 * client credentials, an auth URL with an API key) or a base URL of another
 * API than the live one while its auth URL stays the live token service
 * (which goes only with the live API), and ConfigError without
 * HIRESYNC_SECRET_KEY (or, to move a partner account's auth URL, the
 * partner app).
 */
export async function updateAccount(
  context: AccountsContext,
  name: string,
  change: AccountChange,
): Promise<UpdateOutcome> {
  const box = requireBox(context, 'seal the credentials of an account');
  return context.tokens.transaction().execute(async (trx) => {
    // The refresh lock before the row, in the order authorize() and the
    // refresh-token vault take them (a refused refresh updates the row while
    // holding it): the other order deadlocks with a worker's refresh.
    await lockRefreshes(trx, name);
    const current = await trx
      .selectFrom('hiresync.accounts')
      .selectAll()
      .where('name', '=', name)
      .forUpdate()
      .executeTakeFirst();
    if (!current) throw new UnknownAccountError(name);
    const mode = current.auth_mode;
    if (change.sub !== undefined && mode !== 'client_credentials') {
      throw new HiresyncError(
        `account ${name} authenticates with ${describeMode(mode)}: --sub applies only to client credentials`,
      );
    }
    if (change.authUrl !== undefined && mode === 'api_key') {
      throw new HiresyncError(
        `account ${name} authenticates with an API key, whose token endpoint is its base URL + /auth/token: --auth-url does not apply (use --base-url)`,
      );
    }
    if (
      change.baseUrl !== undefined &&
      change.authUrl === undefined &&
      current.auth_url === LIVE_AUTH_URL &&
      defaultAuthUrlFor(change.baseUrl) !== LIVE_AUTH_URL
    ) {
      // The live token service goes only with the live API: its credentials and tokens stay apart.
      throw new HiresyncError(
        `account ${name} gets its tokens from the live token service (${LIVE_AUTH_URL}), which goes only with the live API: to move it to ${change.baseUrl}, name that API's token service with --auth-url (--auth-url ${LIVE_AUTH_URL} to keep the live one); nothing was changed`,
      );
    }
    const baseUrl = change.baseUrl ?? current.base_url;
    const authUrl = change.authUrl ?? current.auth_url;
    const sub = change.sub ?? current.sub;
    const changed = [
      change.secret !== undefined &&
        (mode === 'client_credentials'
          ? 'client secret'
          : mode === 'api_key'
            ? 'API key'
            : 'refresh token'),
      change.sub !== undefined && 'sub',
      change.baseUrl !== undefined && 'base URL',
      change.authUrl !== undefined && 'auth URL',
    ].filter((c): c is string => typeof c === 'string');

    let token: Parameters<typeof tokenInfoOf>[0] | undefined;
    let state = current.state;
    let namespace = current.credential_namespace;
    let sealed = current.secret;
    if (mode === 'partner') {
      if (change.secret !== undefined) {
        const refreshToken = box.seal(change.secret.reveal(), refreshTokenPurpose(name));
        token = await replaceRefreshToken(trx, name, refreshToken);
        if (state === 'needs_reauthorization') state = 'enabled';
      }
      if (change.authUrl !== undefined) {
        const partner = requirePartner(context, "move a partner account's auth URL");
        namespace = new TokenCipher(partnerAuth(authUrl ?? '', partner, name)).namespace;
      }
    } else {
      if (current.secret === null) {
        throw new SecretKeyError(`account ${name} has no stored credential; add it again`);
      }
      const secret = change.secret ?? new Secret(box.open(current.secret, secretPurpose(name)));
      if (change.secret !== undefined) sealed = box.seal(secret.reveal(), secretPurpose(name));
      const auth: NewAccount['auth'] =
        mode === 'client_credentials'
          ? {
              mode,
              authUrl: authUrl ?? '',
              clientId: current.client_id ?? '',
              clientSecret: secret,
              sub: sub ?? undefined,
            }
          : { mode: 'api_key', apiKey: secret };
      namespace = new TokenCipher(authConfig(baseUrl, auth, secret)).namespace;
      // What the token request sends changed: the refused credential is no
      // longer in force, so the account is tried again.
      const tokenRequestChanged =
        change.secret !== undefined ||
        change.sub !== undefined ||
        change.authUrl !== undefined ||
        (mode === 'api_key' && change.baseUrl !== undefined);
      if (state === 'credentials_refused' && tokenRequestChanged) state = 'enabled';
    }
    const rowChanges = {
      ...(change.baseUrl !== undefined ? { base_url: baseUrl } : {}),
      ...(change.authUrl !== undefined ? { auth_url: authUrl } : {}),
      ...(change.sub !== undefined ? { sub } : {}),
      ...(sealed !== current.secret ? { secret: sealed } : {}),
      ...(namespace !== current.credential_namespace ? { credential_namespace: namespace } : {}),
      ...(state !== current.state ? { state, refusal_reason: null } : {}),
    };
    // A new refresh token lives in refresh_tokens, but the row is updated all
    // the same: its version changes (trigger accounts_touch), so workers drop
    // the account's client, whose access token came from the old grant, and
    // a run in flight resumes with the new one, as after any credential change.
    const touch = change.secret !== undefined;
    const row =
      Object.keys(rowChanges).length === 0 && !touch
        ? current
        : await trx
            .updateTable('hiresync.accounts')
            .set({ state, ...rowChanges })
            .where('name', '=', name)
            .returning(PUBLIC_COLUMNS)
            .executeTakeFirstOrThrow();
    const partnerToken =
      token ??
      (mode === 'partner'
        ? await trx
            .selectFrom('hiresync.refresh_tokens')
            .select(TOKEN_COLUMNS)
            .where('account', '=', name)
            .executeTakeFirst()
        : undefined);
    return {
      account: infoOf(row, partnerToken ? tokenInfoOf(partnerToken) : null),
      changed,
      previousNamespace: current.credential_namespace,
      previousState: current.state,
    };
  });
}
