import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../../src/warehouse/database.js';
import { migrateControl, migrateSchemas } from '../../src/warehouse/migrate-all.js';
import { adminQuery, databaseUrl, TEMPLATE_DATABASE, TEST_DATABASE_PREFIX } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}

/**
 * Provides Postgres and Redis to every test file: TEST_DATABASE_URL and
 * TEST_REDIS_URL when set (CI); else the machine's own services on
 * 127.0.0.1:5432 (user postgres, trust auth) and 127.0.0.1:6379 when they
 * answer; else containers started with testcontainers (needs a Docker engine).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stops: Array<() => Promise<unknown>> = [];
  let pgUrl = process.env.TEST_DATABASE_URL || (await localPostgres());
  let redisUrl = process.env.TEST_REDIS_URL || (await localRedis());
  try {
    if (!pgUrl) {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const container = await new PostgreSqlContainer('postgres:16-alpine').start();
      pgUrl = container.getConnectionUri();
      stops.push(() => container.stop());
    }
    if (!redisUrl) {
      const { RedisContainer } = await import('@testcontainers/redis');
      const container = await new RedisContainer('redis:7-alpine').start();
      redisUrl = container.getConnectionUrl();
      stops.push(() => container.stop());
    }
  } catch (error) {
    throw new Error(
      `tests need Postgres and Redis: set TEST_DATABASE_URL and TEST_REDIS_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres and redis://127.0.0.1:6379), or run a Docker engine for testcontainers (${(error as Error).message})`,
      { cause: error },
    );
  }
  await prepareTemplate(pgUrl);
  project.provide('databaseUrl', pgUrl);
  project.provide('redisUrl', redisUrl);
  return async () => {
    for (const stop of stops) await stop();
  };
}

const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';
const LOCAL_REDIS = 'redis://127.0.0.1:6379';

/** The machine's own Postgres on 127.0.0.1:5432, when one answers with trust auth. */
async function localPostgres(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: LOCAL_POSTGRES, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return LOCAL_POSTGRES;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The machine's own Redis on 127.0.0.1:6379, when one answers PING. */
async function localRedis(): Promise<string | undefined> {
  const redis = new Redis(LOCAL_REDIS, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG' ? LOCAL_REDIS : undefined;
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

/**
 * Drops databases left by earlier runs, then migrates a template database once;
 * each test file clones it (CREATE DATABASE ... TEMPLATE), which takes
 * milliseconds where migrating would take a second.
 */
async function prepareTemplate(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const { rows } = await client.query<{ datname: string }>(
    'select datname from pg_database where datname ~ $1',
    [`^${TEST_DATABASE_PREFIX}(template|[0-9a-f]{12})$`],
  );
  await client.end();
  await adminQuery(
    adminUrl,
    rows.map((r) => `drop database if exists ${r.datname} with (force)`),
  );
  await adminQuery(adminUrl, [`create database ${TEMPLATE_DATABASE}`]);
  const db = createDatabase(databaseUrl(adminUrl, TEMPLATE_DATABASE));
  try {
    // As `hiresync migrate` does: hiresync's own schema (the shared tables
    // and the safe casts of the typed views live there), then public's views
    // (the all_accounts views are left to the tests that need them).
    await migrateControl(db);
    await migrateSchemas(db, ['public']);
  } finally {
    await db.destroy();
  }
}
