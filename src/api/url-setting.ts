/**
 * Where the API's base URL is set, as an error names it: for `default`
 * (`account` undefined) the environment's HIRESYNC_BASE_URL; for a registered
 * account its stored base URL and the command that changes it.
 */
export function baseUrlSetting(account: string | undefined): string {
  return account === undefined
    ? 'HIRESYNC_BASE_URL'
    : `account ${account}'s base URL ('hiresync accounts update ${account} --base-url URL' changes it)`;
}

/**
 * Where the token service's URL is set, as an error names it: for `default`
 * (`account` undefined) HIRESYNC_AUTH_URL; for a registered account its stored
 * auth URL and the command that changes it.
 */
export function authUrlSetting(account: string | undefined): string {
  return account === undefined
    ? 'HIRESYNC_AUTH_URL'
    : `account ${account}'s auth URL ('hiresync accounts update ${account} --auth-url URL' changes it)`;
}
