import { readFileSync } from 'node:fs';
import type { ConfigProblem } from '../errors.js';
import {
  keyPrefix,
  parseRedisUrl,
  type RedisTarget,
  RedisUrlProblem,
} from '../redis/redis-target.js';
import { registerSecret } from '../secret.js';
import type { Env, RedisSettings } from './types.js';

/** HIRESYNC_REDIS_PREFIX: default `hiresync`; letters, digits, `_ . -`. */
export function readRedisPrefix(env: Env): { prefix: string; problems: ConfigProblem[] } {
  const prefix = (env.HIRESYNC_REDIS_PREFIX ?? '').trim() || 'hiresync';
  if (/^[A-Za-z0-9_.-]+$/.test(prefix)) return { prefix, problems: [] };
  return {
    prefix,
    problems: [
      {
        variable: 'HIRESYNC_REDIS_PREFIX',
        message: 'may hold only letters, digits, _ . and -',
      },
    ],
  };
}

/** REDIS_CA_FILE's PEM, or the problem of a file that cannot be read or holds no certificate. */
function readCaFile(path: string): { ca?: string; problem?: string } {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    return {
      problem: `names ${path}, which cannot be read (${code}): give the path of the PEM file of the CA that signed the Redis server's certificate`,
    };
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    return {
      problem: `names ${path}, which holds no PEM certificate ("-----BEGIN CERTIFICATE-----")`,
    };
  }
  return { ca: pem };
}

/**
 * Reads REDIS_URL (required), REDIS_CA_FILE, REDIS_SENTINEL_PASSWORD and
 * HIRESYNC_REDIS_PREFIX. Problems are returned, never thrown, so each loader
 * reports them with its own; nothing connects. A CA file or a Sentinel
 * password that the URL's form would not use is a problem, not ignored: a
 * deployment that meant TLS never runs in plain text unawares.
 */
export function readRedis(env: Env): { settings?: RedisSettings; problems: ConfigProblem[] } {
  const { prefix, problems } = readRedisPrefix(env);
  const text = (name: string) => (env[name] ?? '').trim() || undefined;
  const url = text('REDIS_URL');
  const caFile = text('REDIS_CA_FILE');
  const sentinelPassword = text('REDIS_SENTINEL_PASSWORD');
  if (sentinelPassword !== undefined) registerSecret(sentinelPassword, { pinned: true });
  let target: RedisTarget | undefined;
  if (url === undefined) {
    problems.push({ variable: 'REDIS_URL', message: 'is required' });
  } else {
    try {
      target = parseRedisUrl(url);
      if (target.password !== undefined) registerSecret(target.password, { pinned: true });
    } catch (error) {
      if (!(error instanceof RedisUrlProblem)) throw error;
      problems.push({ variable: 'REDIS_URL', message: error.message });
    }
  }
  let ca: string | undefined;
  if (caFile !== undefined) {
    const read = readCaFile(caFile);
    if (read.problem) problems.push({ variable: 'REDIS_CA_FILE', message: read.problem });
    ca = read.ca;
    if (target && !target.tls) {
      problems.push({
        variable: 'REDIS_CA_FILE',
        message: `is set, but REDIS_URL (${target.shown}) is not TLS: use rediss:// (or rediss+sentinel://, rediss+cluster://) so the CA is used, or unset REDIS_CA_FILE`,
      });
    }
  }
  if (sentinelPassword !== undefined && target && target.kind !== 'sentinel') {
    problems.push({
      variable: 'REDIS_SENTINEL_PASSWORD',
      message: `is set, but REDIS_URL (${target.shown}) names no Sentinels (redis+sentinel://…): unset it`,
    });
  }
  if (target === undefined || problems.length > 0) return { problems };
  const redis: RedisTarget =
    target.kind === 'sentinel'
      ? {
          ...target,
          ...(ca === undefined ? {} : { ca }),
          ...(sentinelPassword === undefined ? {} : { sentinelPassword }),
        }
      : { ...target, ...(ca === undefined ? {} : { ca }) };
  return { settings: { redis, redisPrefix: keyPrefix(prefix, redis) }, problems };
}
