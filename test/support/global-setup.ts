import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../../src/warehouse/database.js';
import { migrateToLatest } from '../../src/warehouse/migrate.js';
import { adminQuery, databaseUrl, TEMPLATE_DATABASE, TEST_DATABASE_PREFIX } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}

/**
 * Provides Postgres and Redis to every test file: TEST_DATABASE_URL and
 * TEST_REDIS_URL when set (CI, or a machine that runs them), else containers
 * started with testcontainers (needs a Docker engine).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stops: Array<() => Promise<unknown>> = [];
  let pgUrl = process.env.TEST_DATABASE_URL;
  let redisUrl = process.env.TEST_REDIS_URL;
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

/**
 * Drops databases left by earlier runs, then migrates a template database once;
 * each test file clones it (CREATE DATABASE ... TEMPLATE), which takes
 * milliseconds where migrating would take a second.
 */
async function prepareTemplate(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const { rows } = await client.query<{ datname: string }>(
    'select datname from pg_database where datname like $1',
    [`${TEST_DATABASE_PREFIX}%`],
  );
  await client.end();
  await adminQuery(
    adminUrl,
    rows.map((r) => `drop database if exists ${r.datname} with (force)`),
  );
  await adminQuery(adminUrl, [`create database ${TEMPLATE_DATABASE}`]);
  const db = createDatabase(databaseUrl(adminUrl, TEMPLATE_DATABASE));
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}
