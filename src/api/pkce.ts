import { createHash, randomBytes } from 'node:crypto';

/** A PKCE pair (RFC 7636): the verifier kept by hiresync, the challenge sent in the authorization request. */
export interface Pkce {
  /** `code_verifier`: 32 random bytes, base64url (43 characters); a secret until the code is exchanged. */
  verifier: string;
  /** `code_challenge`: BASE64URL(SHA256(verifier)), sent with `code_challenge_method=S256`. */
  challenge: string;
}

/** The S256 challenge of `verifier` (RFC 7636 4.2): base64url of its SHA-256, without padding. */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** A fresh PKCE pair for one authorization request. */
export function newPkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: pkceChallenge(verifier) };
}
