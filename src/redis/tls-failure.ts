import { ConfigError, type ConfigProblem, HiresyncError } from '../errors.js';
import { redisFailureReason } from './redis-error.js';
import type { RedisTarget } from './redis-target.js';

/**
 * A TLS failure of Redis, worded to follow the setting's name. `certain`:
 * only the setting explains it (a certificate that does not verify, TLS
 * spoken to a server without it): a configuration error, exit 2. Otherwise a
 * likely cause (a reset or a timeout has others): the hint of an error.
 */
export interface RedisTlsProblem extends ConfigProblem {
  certain: boolean;
}

/** What of a target the wording of its failures needs. */
type Described = Pick<RedisTarget, 'tls' | 'ca' | 'shown'>;

/** The codes of a certificate the client could not verify (OpenSSL's, as Node gives them). */
const UNVERIFIED =
  /^(UNABLE_TO_(VERIFY_LEAF_SIGNATURE|GET_ISSUER_CERT(_LOCALLY)?|DECRYPT_CERT_SIGNATURE)|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_[A-Z_]+|INVALID_CA|PATH_LENGTH_EXCEEDED|INVALID_PURPOSE)$/;

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A TLS record or handshake the client could not read: the server does not speak TLS there. */
function notTls(error: unknown): boolean {
  const code = codeOf(error) ?? '';
  const message = String((error as { message?: unknown } | undefined)?.message ?? '');
  return (
    code === 'EPROTO' ||
    code.startsWith('ERR_SSL_') ||
    /wrong version number|packet length too long|unknown protocol|record layer failure/i.test(
      message,
    )
  );
}

/**
 * The configuration a failure to connect to Redis points at, when it is one
 * of TLS: a certificate that does not verify (REDIS_CA_FILE, or the system's
 * CAs without it), a certificate for another host, a `rediss…` URL to a
 * server without TLS, or a `redis://` URL to a server that takes TLS only
 * (REDIS_URL's scheme). Worded to follow the setting's name, saying what to
 * do. Undefined for any other failure (refused, timed out, a password…).
 * `error` is the connection's own error (its 'error' event), not the
 * "Connection is closed" a command fails with. The one place these are worded:
 * the preflight of every command and the worker's /healthz and log use it.
 */
export function redisTlsProblem(given: unknown, target: Described): RedisTlsProblem | undefined {
  // A Cluster none of whose nodes answered keeps the cause in lastNodeError.
  const error = (given as { lastNodeError?: unknown } | undefined)?.lastNodeError ?? given;
  const code = codeOf(error);
  if (target.tls) {
    if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
      return {
        certain: true,
        variable: 'REDIS_URL',
        message: `names a Redis server (${target.shown}) whose certificate is not valid now (${redisFailureReason(error)}): renew it on the server, or check this machine's clock`,
      };
    }
    if (code !== undefined && UNVERIFIED.test(code)) {
      return target.ca === undefined
        ? {
            certain: true,
            variable: 'REDIS_CA_FILE',
            message: `is not set, and the certificate of the Redis server at ${target.shown} does not verify against the system's CAs (${redisFailureReason(error)}): set REDIS_CA_FILE to the PEM file of the CA that signed it`,
          }
        : {
            certain: true,
            variable: 'REDIS_CA_FILE',
            message: `names a CA that did not sign the certificate of the Redis server at ${target.shown} (${redisFailureReason(error)}): give the PEM file of the CA that signed it`,
          };
    }
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      return {
        certain: true,
        variable: 'REDIS_URL',
        message: `names a host the Redis server's certificate is not for (${redisFailureReason(error)}): use in REDIS_URL a host name or address the certificate names`,
      };
    }
    if (notTls(error)) {
      return {
        certain: true,
        variable: 'REDIS_URL',
        message: `is ${target.shown.split(':', 1)[0]}://, but the server at ${target.shown} did not answer in TLS (${redisFailureReason(error)}): use redis:// for a server without TLS, or the port of its TLS listener`,
      };
    }
    if (code === 'ETIMEDOUT') {
      return {
        certain: false,
        variable: 'REDIS_URL',
        message: `is ${target.shown.split(':', 1)[0]}://, but the server at ${target.shown} did not answer (${redisFailureReason(error)}): a server without TLS never answers a TLS client, so use redis:// if it has none; else check that the host and port answer`,
      };
    }
    return undefined;
  }
  if (code === 'ECONNRESET' || code === 'EPIPE') {
    return {
      certain: false,
      variable: 'REDIS_URL',
      message: `is ${target.shown.split(':', 1)[0]}://, and the server at ${target.shown} closed the connection without answering (${redisFailureReason(error)}), as a server that takes TLS only does: use rediss:// (and REDIS_CA_FILE for a private CA)`,
    };
  }
  return undefined;
}

/** {@link redisTlsProblem} as one line, `SETTING: message` (as a ConfigError says it), or undefined. */
export function describeRedisTlsFailure(error: unknown, target: Described): string | undefined {
  const problem = redisTlsProblem(error, target);
  return problem && `${problem.variable}: ${problem.message}`;
}

/** A configuration error of Redis's TLS (exit 2): the worker waits, not ready, on it. */
export class RedisTlsError extends ConfigError {}

/**
 * The error a command throws when it cannot connect to Redis: a ConfigError
 * (exit 2) naming the setting for a certain TLS failure; else "cannot reach
 * Redis", with the TLS setting to check when one is likely, or REDIS_URL.
 * `error` is the connection's last 'error' event when there was one.
 */
export function redisConnectionError(error: unknown, target: Described): HiresyncError {
  const problem = redisTlsProblem(error, target);
  if (problem?.certain) {
    return new RedisTlsError([{ variable: problem.variable, message: problem.message }]);
  }
  const message = problem
    ? `cannot reach Redis: ${problem.variable}: ${problem.message}`
    : `cannot reach Redis (${redisFailureReason(error)}): check REDIS_URL`;
  return new HiresyncError(message, { cause: error });
}

/** The TLS failure of each connection's last attempt to connect, worded; none once it is ready. */
const failures = new WeakMap<object, string>();

/**
 * Keeps, for `redis`, the wording of its last connection error when it is
 * one of TLS (a certificate changed on the server's side under a running
 * worker), cleared when it connects: what /healthz says of Redis then, rather
 * than ioredis's "Connection is closed". Returns the wording, or undefined.
 */
export function noteConnectionError(
  redis: object,
  error: unknown,
  target: Described,
): string | undefined {
  const text = describeRedisTlsFailure(error, target);
  if (text === undefined) failures.delete(redis);
  else failures.set(redis, text);
  return text;
}

/** Forgets `redis`'s TLS failure: it connected. */
export function clearConnectionError(redis: object): void {
  failures.delete(redis);
}

/** `redis`'s TLS failure noted by {@link noteConnectionError}, if it has one now. */
export function tlsFailureOf(redis: object): string | undefined {
  return failures.get(redis);
}
