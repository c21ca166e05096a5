import { join } from 'node:path';
import type { DemoConfig } from '../config/types.js';
import { ConfigError } from '../errors.js';
import { stateDir } from '../local-services/instance-dir.js';
import {
  type ProvidedServices,
  probeServices,
  provideServices,
} from '../local-services/provide-services.js';
import { DEMO_CHAIN } from '../local-services/service-plan.js';
import { packageRoot } from '../version.js';

/**
 * The demo's Postgres and Redis, as the chain of `DEMO_CHAIN` finds them:
 * DATABASE_URL and REDIS_URL; else the machine's own on 127.0.0.1:5432 and
 * :6379; else an embedded Postgres (kept in `.hiresync/` of the checkout)
 * and a private redis-server from PATH (or Redis in a container). Throws a
 * ConfigError (exit 2) before starting anything when a service is nowhere
 * to be had. Only the demo does this: every other command uses the
 * services it is given. `root` is the checkout (.hiresync/ goes there) and
 * `probe` what looks at this machine, both replaced by tests.
 */
export async function demoServices(
  config: DemoConfig,
  root: string = packageRoot(),
  probe: typeof probeServices = probeServices,
): Promise<ProvidedServices> {
  const { plan, binaries } = await probe(DEMO_CHAIN, {
    givenPostgres: config.adminUrl,
    givenRedis: config.redisUrl,
  });
  if (!plan.ok) throw new ConfigError(plan.missing);
  return provideServices(plan, {
    binaries,
    postgresDir: async (user) => join(await stateDir(root, user), 'postgres'),
  });
}

/** The lines saying what the demo started for itself (none for services it was given or found). */
export function describeServices(services: ProvidedServices, keep: boolean): string[] {
  const lines: string[] = [];
  const { redis, postgres } = services;
  if (redis.kind === 'private') {
    lines.push(
      `Redis: nothing answers on 127.0.0.1:6379 and REDIS_URL is not set, so a private redis-server (pid ${redis.pid}) serves ${redis.url}, keeping nothing on disk, stopped when the demo ends.`,
    );
  } else if (redis.kind === 'container') {
    lines.push(
      `Redis: nothing answers on 127.0.0.1:6379, REDIS_URL is not set and there is no redis-server on PATH, so a Redis container serves ${redis.url}, removed when the demo ends.`,
    );
  }
  const embedded = postgres.embedded;
  if (embedded) {
    const which = embedded.reused
      ? `the embedded Postgres an earlier demo left running (pid ${embedded.pid})`
      : `an embedded Postgres (pid ${embedded.pid})`;
    const until = keep ? 'kept running after the demo (--keep)' : 'stopped when the demo ends';
    lines.push(
      `Postgres: nothing answers on 127.0.0.1:5432 and DATABASE_URL is not set, so ${which} serves 127.0.0.1:${embedded.port}, its data in ${embedded.dir}, ${until}.`,
    );
  }
  return lines;
}

/** The demo's last line: how to query the tables, and whether the server they are in still runs. */
export function queryLine(services: ProvidedServices, databaseUrl: string, keep: boolean): string {
  const url = new URL(databaseUrl);
  if (url.password) url.password = '***';
  const embedded = services.postgres.embedded;
  if (!embedded) return `The tables are yours to query: psql ${url.href}`;
  if (!keep) {
    return `The tables were in the embedded Postgres, stopped now: 'npm run demo -- --keep' keeps it running to query them.`;
  }
  return `The tables are yours to query: psql ${url.href}\nThe embedded Postgres keeps running (pid ${embedded.pid}): stop it with kill -INT ${embedded.pid}, or let the next 'npm run demo' reuse it (and stop it when it ends).`;
}
