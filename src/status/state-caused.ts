/**
 * Which failed runs an account's own state caused: one cause, told once. A
 * partner account whose refresh token was refused (invalid_grant) is put in
 * state needs_reauthorization and the run that met the refusal fails with
 * ReauthorizationRequiredError's message; a registered account whose secret
 * or key the token service refused (401, 400 invalid_client) is put in state
 * credentials_refused, the run that met it failing with the token request's
 * error (src/api/token-answer.ts) and later ones with
 * CredentialsRefusedError's (src/errors.ts). Those failures are the account's
 * problem, not the resource's: `status --check` and the console fold them
 * into it (src/status/check.ts). Pure, no I/O.
 */

/** The account states whose problem can cause a resource's failure. */
export type CausingState = 'needs_reauthorization' | 'credentials_refused';

/** How a run's error begins when account `name`'s state caused it, per state. */
function causedPrefixes(name: string): Readonly<Record<CausingState, readonly string[]>> {
  return {
    // ReauthorizationRequiredError (the refresh grant refused, or no refresh token).
    needs_reauthorization: [`account ${name} needs re-authorizing: `],
    credentials_refused: [
      // The token request refused (describeTokenError of a registered account).
      `account ${name}: the token service refused its `,
      // CredentialsRefusedError: a run of an account already in that state.
      `account ${name}'s credentials were refused: `,
    ],
  };
}

/**
 * The state of account `name` (now `state`) that caused a run to fail with
 * `error`, or undefined when the account is not in such a state or the
 * error says something else (a 500, a 403, a rate limit: the resource's own
 * problem). An account enabled again keeps its old failures as the
 * resources' own until their next runs.
 */
export function stateThatCaused(
  name: string,
  state: string,
  error: string | null | undefined,
): CausingState | undefined {
  if (state !== 'needs_reauthorization' && state !== 'credentials_refused') return undefined;
  if (!error) return undefined;
  return causedPrefixes(name)[state].some((prefix) => error.startsWith(prefix)) ? state : undefined;
}
