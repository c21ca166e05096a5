import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dockerEngineAnswers, startDockerRedis } from './docker-redis.js';
import { type EmbeddedPostgres, startEmbeddedPostgres, stopLeftover } from './embedded-postgres.js';
import { sweepLeftovers, writeHolder } from './instance-dir.js';
import {
  binariesFor,
  findPostgresBinaries,
  PLATFORM,
  type PostgresBinaries,
} from './postgres-binaries.js';
import { startPrivateRedis } from './private-redis.js';
import { onPath, type ServerUser, serverUser, untilExit } from './processes.js';
import {
  dockerCouldHelp,
  planServices,
  type ServiceChain,
  type ServicePlan,
  type ServiceProbes,
} from './service-plan.js';
import { answersOn } from './tcp.js';

/** How the chain's probes are made; each default suits the demo. */
export interface ProbeOptions {
  /** The URLs the chain's variables name, if set. */
  givenPostgres?: string | undefined;
  givenRedis?: string | undefined;
  /** Whether the machine's own Postgres will do; default: something answers on 127.0.0.1:5432. */
  localPostgres?: () => Promise<boolean>;
  /** Whether the machine's own Redis will do; default: something answers on 127.0.0.1:6379. */
  localRedis?: () => Promise<boolean>;
}

/**
 * Probes this machine for what `chain` can use, and decides. Nothing is
 * started; a Docker engine is asked only when it could change the answer.
 */
export async function probeServices(
  chain: ServiceChain,
  options: ProbeOptions,
): Promise<{ probes: ServiceProbes; plan: ServicePlan; binaries: PostgresBinaries | undefined }> {
  const { givenPostgres, givenRedis } = options;
  const [localPostgres, localRedis, binaries, redisServer] = await Promise.all([
    givenPostgres ? false : (options.localPostgres ?? (() => answersOn('127.0.0.1', 5432)))(),
    givenRedis ? false : (options.localRedis ?? (() => answersOn('127.0.0.1', 6379)))(),
    findPostgresBinaries(),
    onPath('redis-server'),
  ]);
  const probes: ServiceProbes = {
    givenPostgres,
    givenRedis,
    localPostgres,
    localRedis,
    dockerEngine: false,
    embeddedPostgres: binaries ? true : { platform: PLATFORM },
    redisServer,
  };
  let plan = planServices(probes, chain);
  if (dockerCouldHelp(plan, chain)) {
    probes.dockerEngine = await dockerEngineAnswers();
    plan = planServices(probes, chain);
  }
  return { probes, plan, binaries };
}

/** A service as provided: its URL, where it came from, and how to stop it if this process started it. */
export interface ProvidedService {
  url: string;
  kind: 'given' | 'local' | 'container' | 'embedded' | 'private';
  /** Set when this process started it (or took over one left running). */
  stop?: () => Promise<void>;
}

/** Postgres and Redis as a plan provides them. */
export interface ProvidedServices {
  postgres: ProvidedService & { embedded?: EmbeddedPostgres };
  redis: ProvidedService & { pid?: number };
  /** Stops what this process started, Redis first. */
  stop(): Promise<void>;
}

/** How {@link provideServices} starts what the plan asks for. */
export interface ProvideOptions {
  binaries: PostgresBinaries | undefined;
  /**
   * The embedded Postgres's folder, kept from run to run (the demo's, see
   * stateDir); undefined: a throwaway folder under the system's temporary
   * directory, removed when it stops (the tests').
   */
  postgresDir?: (user: ServerUser | undefined) => Promise<string>;
  /** Starts the containers of the plan (the tests: testcontainers); default Redis: `docker run`. */
  containers?: {
    postgres?: () => Promise<{ url: string; stop: () => Promise<void> }>;
    redis?: () => Promise<{ url: string; stop: () => Promise<void> }>;
  };
}

/** The prefix of the tests' throwaway embedded Postgres folders under the temporary directory. */
export const THROWAWAY_POSTGRES_PREFIX = 'hiresync-embedded-postgres-';

/**
 * Starts what `plan` asks for: Redis first, then Postgres; should Postgres
 * fail, Redis is stopped again. Given and local services are only passed on.
 */
export async function provideServices(
  plan: Extract<ServicePlan, { ok: true }>,
  options: ProvideOptions,
): Promise<ProvidedServices> {
  const redis = await provideRedis(plan.redis, options);
  try {
    const postgres = await providePostgres(plan.postgres, options);
    return {
      postgres,
      redis,
      stop: async () => {
        await redis.stop?.();
        await postgres.stop?.();
      },
    };
  } catch (error) {
    await redis.stop?.();
    throw error;
  }
}

async function provideRedis(
  source: Extract<ServicePlan, { ok: true }>['redis'],
  options: ProvideOptions,
): Promise<ProvidedServices['redis']> {
  switch (source.kind) {
    case 'given':
    case 'local':
      return { url: source.url, kind: source.kind };
    case 'container': {
      const started = await (options.containers?.redis ?? startDockerRedis)();
      return { url: started.url, kind: 'container', stop: started.stop };
    }
    case 'private': {
      const started = await startPrivateRedis(source.redisServer);
      return { url: started.url, kind: 'private', pid: started.pid, stop: started.stop };
    }
  }
}

async function providePostgres(
  source: Extract<ServicePlan, { ok: true }>['postgres'],
  options: ProvideOptions,
): Promise<ProvidedServices['postgres']> {
  switch (source.kind) {
    case 'given':
    case 'local':
      return { url: source.url, kind: source.kind };
    case 'container': {
      const start = options.containers?.postgres;
      if (!start) throw new Error('no container runtime for Postgres was given');
      const started = await start();
      return { url: started.url, kind: 'container', stop: started.stop };
    }
    case 'embedded': {
      const embedded = await startEmbedded(options);
      return { url: embedded.url, kind: 'embedded', embedded, stop: embedded.stop };
    }
  }
}

/** The embedded Postgres in the folder given, or in a throwaway one removed when it stops. */
export async function startEmbedded(options: ProvideOptions): Promise<EmbeddedPostgres> {
  if (!options.binaries) throw new Error(`embedded-postgres has no binaries for ${PLATFORM}`);
  const user = await serverUser();
  const binaries = await binariesFor(options.binaries, user);
  if (options.postgresDir) {
    return startEmbeddedPostgres({ dir: await options.postgresDir(user), binaries, user });
  }
  const parent = tmpdir();
  await sweepLeftovers(parent, THROWAWAY_POSTGRES_PREFIX, (dir) =>
    stopLeftover(dir, binaries, user),
  );
  const dir = await mkdtemp(join(parent, THROWAWAY_POSTGRES_PREFIX));
  await writeHolder(dir, { pid: process.pid });
  try {
    const embedded = await startEmbeddedPostgres({ dir, binaries, user });
    // Registered after the server's own: 'exit' listeners run in order.
    const release = untilExit(() => rmSync(dir, { recursive: true, force: true }));
    return {
      ...embedded,
      stop: async () => {
        await embedded.stop();
        await rm(dir, { recursive: true, force: true });
        release();
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
