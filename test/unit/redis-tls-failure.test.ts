import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseRedisUrl } from '../../src/redis/redis-target.js';
import { redisConnectionError, redisTlsProblem } from '../../src/redis/tls-failure.js';

const tls = parseRedisUrl('rediss://:secret@redis.internal:6380/2');
const withCa = { ...tls, ca: '-----BEGIN CERTIFICATE-----' };
const plain = parseRedisUrl('redis://redis.internal:6379');

/** An error as Node's TLS socket emits it: a code and OpenSSL's text. */
function tlsError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('the wording of a failed connection to Redis', () => {
  it('names REDIS_CA_FILE, set or not, for every certificate that does not verify', () => {
    for (const [code, text] of [
      ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'],
      ['SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'],
      ['DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'],
      ['CERT_SIGNATURE_FAILURE', 'certificate signature failure'],
    ] as const) {
      expect(redisTlsProblem(tlsError(code, text), withCa)).toMatchObject({
        certain: true,
        variable: 'REDIS_CA_FILE',
        message: expect.stringContaining(
          `names a CA that did not sign the certificate of the Redis server at rediss://:***@redis.internal:6380/2 (${code}: ${text})`,
        ),
      });
      expect(redisTlsProblem(tlsError(code, text), tls)).toMatchObject({
        certain: true,
        variable: 'REDIS_CA_FILE',
        message: expect.stringContaining('is not set, and the certificate of the Redis server'),
      });
    }
  });

  it('says a certificate out of its validity is to be renewed on the server, not a CA to change', () => {
    const expired = tlsError('CERT_HAS_EXPIRED', 'certificate has expired');
    expect(redisTlsProblem(expired, withCa)).toMatchObject({
      certain: true,
      variable: 'REDIS_URL',
      message: expect.stringContaining('whose certificate is not valid now'),
    });
  });

  it('names REDIS_URL for a certificate of another host, and TLS refused by a plain server', () => {
    const altname = tlsError(
      'ERR_TLS_CERT_ALTNAME_INVALID',
      "Hostname/IP does not match certificate's altnames: Host: redis.internal. is not in the cert's altnames: DNS:localhost",
    );
    expect(redisTlsProblem(altname, withCa)).toMatchObject({
      certain: true,
      variable: 'REDIS_URL',
      message: expect.stringContaining("names a host the Redis server's certificate is not for"),
    });
    const plainAnswer = tlsError('EPROTO', 'error:0A00010B:SSL routines::wrong version number');
    expect(redisTlsProblem(plainAnswer, withCa)).toMatchObject({
      certain: true,
      variable: 'REDIS_URL',
      message: expect.stringContaining('use redis:// for a server without TLS'),
    });
  });

  it('is a configuration error (exit 2) only when the setting is certain to be the cause', () => {
    const unverified = tlsError(
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'unable to verify the first certificate',
    );
    expect(redisConnectionError(unverified, withCa)).toBeInstanceOf(ConfigError);
    const reset = tlsError('ECONNRESET', 'read ECONNRESET');
    const hinted = redisConnectionError(reset, plain);
    expect(hinted).not.toBeInstanceOf(ConfigError);
    expect(hinted.message).toContain('cannot reach Redis: REDIS_URL: is redis://');
    expect(hinted.message).toContain('use rediss://');
    const refused = tlsError('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:6380');
    expect(redisConnectionError(refused, withCa).message).toBe(
      'cannot reach Redis (connect ECONNREFUSED 10.0.0.1:6380): check REDIS_URL',
    );
  });

  it('never shows the password of REDIS_URL', () => {
    const unverified = tlsError(
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'unable to verify the first certificate',
    );
    expect(redisConnectionError(unverified, tls).message).not.toContain('secret');
  });
});
