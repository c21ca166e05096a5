import type { AuthConfig } from '../config/types.js';
import { oauthErrorCode, oauthErrorText } from './token-answer.js';

/**
 * Records that the token endpoint refused a registered account's credential:
 * puts the account in state `credentials_refused` with `reason` (implemented
 * over hiresync.accounts in src/accounts).
 */
export interface CredentialRefusals {
  refused(reason: string): Promise<void>;
}

/** RFC 6749 5.2 codes that say the client's own credential was refused. */
const CLIENT_REFUSED = new Set(['invalid_client', 'unauthorized_client']);

/**
 * Why the token endpoint's answer (`status`, `body`) refuses a registered
 * client-credentials or API-key account's credential for good, or undefined
 * when it does not: a 401, or a 400 `invalid_client`/`unauthorized_client`.
 * A 5xx, a 429, a 403 (a sub's permissions), another 400 (a malformed
 * request), a partner account (its refresh grant has needs_reauthorization),
 * `default` (no row, no state) and an account being added say nothing of it.
 * The reason names the status and the endpoint's error text, never the credential.
 */
export function credentialRefusalOf(
  auth: AuthConfig,
  status: number,
  body: string,
): string | undefined {
  if (auth.mode === 'partner' || auth.adding || auth.account === undefined) return undefined;
  const code = oauthErrorCode(body);
  const refused =
    status === 401 || (status === 400 && code !== undefined && CLIENT_REFUSED.has(code));
  if (!refused) return undefined;
  const text = oauthErrorText(body);
  const what = auth.mode === 'client_credentials' ? 'client secret' : 'API key';
  return `the token service refused its ${what} (${status}${text ? ` ${text}` : ''})`;
}
