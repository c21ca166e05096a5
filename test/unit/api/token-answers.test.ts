import { describe, expect, it } from 'vitest';
import {
  holdWhileSent,
  isClientAuthError,
  rotatedRefreshToken,
} from '../../../src/api/token-provider.js';

describe('holdWhileSent', () => {
  it('follows the outer signal while no request is on the wire', () => {
    const outer = new AbortController();
    const held = holdWhileSent(outer.signal);
    outer.abort(new Error('shutting down'));
    expect(held.signal.aborted).toBe(true);
    expect(() => held.sending()).toThrow('shutting down');
  });

  it('holds an abort that arrives while the request is on the wire until its answer is in', () => {
    const outer = new AbortController();
    const held = holdWhileSent(outer.signal);
    held.sending();
    outer.abort(new Error('shutting down'));
    expect(held.signal.aborted).toBe(false);
    held.answered();
    expect(held.signal.aborted).toBe(true);
    expect(held.signal.reason).toEqual(new Error('shutting down'));
  });

  it('stops following the outer signal once released', () => {
    const outer = new AbortController();
    const held = holdWhileSent(outer.signal);
    held.release();
    outer.abort();
    expect(held.signal.aborted).toBe(false);
  });
});

describe('token answers', () => {
  it('reads a rotated refresh token whatever else the answer holds', () => {
    expect(rotatedRefreshToken('{"access_token":"","refresh_token":"r2"}')).toBe('r2');
    expect(rotatedRefreshToken('{"access_token":"a"}')).toBeUndefined();
    expect(rotatedRefreshToken('{"refresh_token":""}')).toBeUndefined();
    expect(rotatedRefreshToken('{"refresh_token":5}')).toBeUndefined();
    expect(rotatedRefreshToken('null')).toBeUndefined();
    expect(rotatedRefreshToken('<html>')).toBeUndefined();
  });

  it("tells the client's own refusal (invalid_client) from a refused grant", () => {
    expect(isClientAuthError('{"error":"invalid_client"}')).toBe(true);
    expect(isClientAuthError('{"error":"invalid_grant"}')).toBe(false);
    expect(isClientAuthError('not json')).toBe(false);
    expect(isClientAuthError('null')).toBe(false);
  });
});
