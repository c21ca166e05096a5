/**
 * What the token endpoint answered a refresh grant, as the vault needs it:
 * the refresh token it rotated to (if any), read before anything else of the
 * answer is judged, and either the value the grant yielded or why the answer
 * cannot be used (a refusal, an access token that cannot be sent).
 */
export type GrantAnswer<T> = { rotated: string | undefined } & ({ value: T } | { error: Error });

/**
 * Where a partner account's refresh token lives (Postgres, sealed, in
 * production: src/accounts/refresh-token-vault.ts). The API client never
 * holds one longer than a refresh grant.
 */
export interface RefreshTokenVault {
  /**
   * Runs one refresh grant: `send` is given the stored refresh token and a
   * `sending` callback to await right before the request leaves (the vault
   * records then that a grant's outcome is pending), and returns what the
   * token endpoint answered. The vault commits a rotated token before it
   * resolves or rethrows the answer's error, so a rotation is kept whatever
   * else is wrong with the answer, and the access token that came with it is
   * never used (nor stored) before the new refresh token is safe. One grant
   * at a time per account, across every process. An answer whose error is a
   * {@link RefreshRefusedError} marks the account as needing
   * re-authorization and throws a ReauthorizationRequiredError; when `send`
   * throws, the outcome is unknown and stays recorded as pending once
   * `sending` was called.
   */
  exchange<T>(
    send: (refreshToken: string, sending: () => Promise<void>) => Promise<GrantAnswer<T>>,
  ): Promise<T>;
}
