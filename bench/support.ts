import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { postgresTls } from '../src/postgres-tls.js';
import { createDatabase } from '../src/warehouse/database.js';
import { migrateAll } from '../src/warehouse/setup/migrate-all.js';

/** The Postgres server benchmarks use: DATABASE_URL, else the local one. */
export const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A client of `url` with TLS as its `sslmode`, `sslrootcert`, `sslcert` and `sslkey` say (src/postgres-tls.ts), as hiresync's own. */
export function postgresClient(url: string): pg.Client {
  const tls = postgresTls(url);
  return new pg.Client({
    connectionString: tls.connectionString,
    ...(tls.ssl === undefined ? {} : { ssl: tls.ssl }),
  });
}

/**
 * Creates a fresh database for one benchmark on the server of `admin`
 * (default {@link ADMIN_URL}), migrated (public) unless `migrate` is false;
 * returns its URL and a drop function.
 */
export async function freshDatabase(
  label: string,
  { migrate = true, admin = ADMIN_URL }: { migrate?: boolean; admin?: string } = {},
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `hiresync_bench_${label}_${randomUUID().slice(0, 8)}`;
  const creator = postgresClient(admin);
  await creator.connect();
  await creator.query(`create database ${name}`);
  await creator.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  if (migrate) {
    const db = createDatabase(url.href);
    await migrateAll(db);
    await db.destroy();
  }
  return {
    url: url.href,
    drop: async () => {
      const client = postgresClient(admin);
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

/** The median of `values` (the mean of the middle two when even); NaN when empty. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** CPU time of process `pid` so far (utime + stime), in seconds; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of the line; clock ticks of 1/100 s on Linux.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The machine's CPU time so far, busy and total, in clock ticks (/proc/stat). */
export function machineTicks(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  // idle and iowait.
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}
