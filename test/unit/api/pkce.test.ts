import { describe, expect, it } from 'vitest';
import { newPkce, pkceChallenge } from '../../../src/api/pkce.js';

describe('PKCE (RFC 7636)', () => {
  it('computes the S256 challenge of the RFC 7636 appendix B example', () => {
    expect(pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('makes a fresh verifier of 43 unreserved characters (32 random bytes) per request, with its challenge', () => {
    const a = newPkce();
    expect(a.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.verifier, 'base64url')).toHaveLength(32);
    expect(a.challenge).toBe(pkceChallenge(a.verifier));
    expect(newPkce().verifier).not.toBe(a.verifier);
  });
});
