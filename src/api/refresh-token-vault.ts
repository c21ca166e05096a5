/**
 * Where a partner account's refresh token lives (Postgres, sealed, in
 * production: src/accounts/refresh-token-vault.ts). The API client never
 * holds one longer than a refresh grant.
 */
export interface RefreshTokenVault {
  /**
   * Runs one refresh grant: `send` is given the stored refresh token and
   * returns what the token endpoint answered, with the refresh token it
   * rotated to, if any. The vault commits a rotated token before it resolves,
   * so the access token that came with it is never used (nor stored) before
   * the new refresh token is safe. One grant at a time per account, across
   * every process. When `send` throws a {@link RefreshRefusedError}, the
   * account is marked as needing re-authorization and a
   * ReauthorizationRequiredError is thrown.
   */
  exchange<T>(
    send: (refreshToken: string) => Promise<{ value: T; rotated: string | undefined }>,
  ): Promise<T>;
}
