import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createDatabase } from '../src/warehouse/database.js';
import { migrateToLatest } from '../src/warehouse/migrate.js';

/** The Postgres server benchmarks use: DATABASE_URL, else the local one. */
export const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Creates a fresh, migrated database for one benchmark; returns its URL and a drop function. */
export async function freshDatabase(
  label: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `hiresync_bench_${label}_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = createDatabase(url.href);
  await migrateToLatest(db);
  await db.destroy();
  return {
    url: url.href,
    drop: async () => {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/** Peak resident set size of this process so far, in MB. */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

export function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
