import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRedis } from '../../src/config/redis-settings.js';
import { keyPrefix, parseRedisUrl, RedisUrlProblem } from '../../src/redis/redis-target.js';

describe('REDIS_URL forms', () => {
  it('reads one server as ioredis does, TLS with rediss://', () => {
    expect(parseRedisUrl('redis://:pw@cache:6380/2')).toMatchObject({
      kind: 'server',
      url: 'redis://:pw@cache:6380/2',
      tls: false,
      shown: 'redis://:***@cache:6380/2',
    });
    expect(parseRedisUrl('rediss://cache:6380')).toMatchObject({ kind: 'server', tls: true });
  });

  it('reads Sentinels, the master and the database, with the password of the master', () => {
    expect(
      parseRedisUrl('redis+sentinel://:s%40cret@10.0.0.1:26379,[::1]:26380/mymaster/3'),
    ).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      master: 'mymaster',
      db: 3,
      password: 's@cret',
      tls: false,
      shown: 'redis+sentinel://:***@10.0.0.1:26379,[::1]:26380/mymaster/3',
    });
    expect(parseRedisUrl('rediss+sentinel://s1:26379/m')).toMatchObject({
      kind: 'sentinel',
      db: 0,
      tls: true,
    });
  });

  it('reads a Cluster from its nodes', () => {
    expect(parseRedisUrl('rediss+cluster://user:pw@n1:7000,n2:7001')).toMatchObject({
      kind: 'cluster',
      nodes: [
        { host: 'n1', port: 7000 },
        { host: 'n2', port: 7001 },
      ],
      username: 'user',
      password: 'pw',
      tls: true,
      shown: 'rediss+cluster://user:***@n1:7000,n2:7001',
    });
  });

  it.each([
    ['http://cache:6379', /must be a redis:\/\//],
    ['redis+sentinel://s1:26379', /must name the master/],
    ['redis+sentinel://s1:26379/m/x', /not a database index/],
    ['redis+sentinel://s1/m', /where a HOST:PORT belongs/],
    ['redis+cluster://n1:7000/1', /database 0 only/],
    ['redis+cluster://n1:99999', /where a HOST:PORT belongs/],
  ])('refuses %s, naming what is wrong', (url, problem) => {
    expect(() => parseRedisUrl(url)).toThrow(RedisUrlProblem);
    expect(() => parseRedisUrl(url)).toThrow(problem);
  });

  it('never shows the password in a problem', () => {
    expect(() => parseRedisUrl('redis+sentinel://:hunter2secret@s1:26379')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2secret') }),
    );
  });
});

describe('hostile REDIS_URLs', () => {
  it('ends the credentials at the last @, so a password may hold @ / ? #, and never shows it', () => {
    expect(parseRedisUrl('redis+sentinel://:p@ss@h1:26379/m')).toMatchObject({
      password: 'p@ss',
      sentinels: [{ host: 'h1', port: 26379 }],
      shown: 'redis+sentinel://:***@h1:26379/m',
    });
    expect(parseRedisUrl('redis+cluster://:pa/ss@h1:7000')).toMatchObject({
      password: 'pa/ss',
      nodes: [{ host: 'h1', port: 7000 }],
    });
    expect(parseRedisUrl('redis://:pa/s?s#@cache:6379/2')).toMatchObject({
      host: 'cache',
      port: 6379,
      db: 2,
      password: 'pa/s?s#',
      shown: 'redis://:***@cache:6379/2',
    });
  });

  it.each([
    ['rediss://h:6380/?password=hunter2secret', /query parameter "password"/],
    ['redis://h:6379?tls=false', /query parameter "tls"/],
    ['redis://h:6379?maxRetriesPerRequest=1', /query parameter "maxRetriesPerRequest"/],
    ['redis+sentinel://h:26379/m?tls=true', /query parameter "tls"/],
    ['redis+cluster://h:7000?password=hunter2secret', /query parameter "password"/],
    ['redis+sentinel://%:hunter2secret@h:1/m', /malformed percent-encoding/],
    ['redis://h:6379/x', /not a database index/],
    ['redis://:hunter2secret@:6379', /names no host/],
  ])('refuses %s rather than obey or ignore it, quoting no password', (url, problem) => {
    expect(() => parseRedisUrl(url)).toThrow(problem);
    expect(() => parseRedisUrl(url)).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2secret') }),
    );
  });

  it('takes family=4|6 of one server, the only query parameter it reads', () => {
    expect(parseRedisUrl('redis://cache:6379?family=6')).toMatchObject({
      host: 'cache',
      family: 6,
    });
    expect(() => parseRedisUrl('redis://cache:6379?family=5')).toThrow(/4 or 6/);
  });
});

describe('the key prefix', () => {
  it('is hash-tagged on a Cluster only, so every key of hiresync and BullMQ is in one slot', () => {
    expect(keyPrefix('hiresync', { kind: 'cluster' })).toBe('{hiresync}');
    expect(keyPrefix('hiresync', { kind: 'sentinel' })).toBe('hiresync');
    expect(keyPrefix('hiresync', { kind: 'server' })).toBe('hiresync');
  });
});

describe('Redis settings', () => {
  const ca = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hiresync-ca-'));
    const file = path.join(dir, 'ca.pem');
    writeFileSync(file, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    return file;
  };

  it('gives the CA file to a TLS URL and the Sentinels their own password', () => {
    const file = ca();
    const { settings, problems } = readRedis({
      REDIS_URL: 'rediss+sentinel://s1:26379/m',
      REDIS_CA_FILE: file,
      REDIS_SENTINEL_PASSWORD: 'sentinel-pw',
      HIRESYNC_REDIS_PREFIX: 'acme',
    });
    expect(problems).toEqual([]);
    expect(settings?.redis).toMatchObject({
      ca: expect.stringContaining('BEGIN CERTIFICATE'),
      sentinelPassword: 'sentinel-pw',
    });
    expect(settings?.redisPrefix).toBe('acme');
  });

  it('hash-tags HIRESYNC_REDIS_PREFIX on a Cluster', () => {
    expect(readRedis({ REDIS_URL: 'redis+cluster://n1:7000' }).settings?.redisPrefix).toBe(
      '{hiresync}',
    );
  });

  it('refuses a CA file that a plain-text URL would not use, rather than run without TLS', () => {
    const { problems } = readRedis({ REDIS_URL: 'redis://cache:6379', REDIS_CA_FILE: ca() });
    expect(problems).toEqual([
      { variable: 'REDIS_CA_FILE', message: expect.stringMatching(/not TLS: use rediss:\/\//) },
    ]);
  });

  it('refuses a CA file it cannot read or that holds no certificate', () => {
    expect(
      readRedis({ REDIS_URL: 'rediss://c:1', REDIS_CA_FILE: '/nonexistent/ca.pem' }).problems,
    ).toEqual([
      { variable: 'REDIS_CA_FILE', message: expect.stringMatching(/cannot be read \(ENOENT\)/) },
    ]);
    const dir = mkdtempSync(path.join(tmpdir(), 'hiresync-ca-'));
    writeFileSync(path.join(dir, 'x.pem'), 'not a certificate');
    expect(
      readRedis({ REDIS_URL: 'rediss://c:1', REDIS_CA_FILE: path.join(dir, 'x.pem') }).problems,
    ).toEqual([
      { variable: 'REDIS_CA_FILE', message: expect.stringMatching(/holds no PEM certificate/) },
    ]);
  });

  it('refuses a Sentinel password without Sentinels, and a missing or malformed URL', () => {
    expect(readRedis({ REDIS_URL: 'redis://c:1', REDIS_SENTINEL_PASSWORD: 'x' }).problems).toEqual([
      { variable: 'REDIS_SENTINEL_PASSWORD', message: expect.stringMatching(/names no Sentinels/) },
    ]);
    expect(readRedis({}).problems).toEqual([{ variable: 'REDIS_URL', message: 'is required' }]);
    expect(readRedis({ REDIS_URL: 'redis+cluster://x' }).problems[0]?.variable).toBe('REDIS_URL');
  });
});
