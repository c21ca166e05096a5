import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { deletePrefix } from '../../src/queue/redis.js';
import { ScheduleKeeper } from '../../src/queue/schedule-keeper.js';
import { createSyncQueue } from '../../src/queue/sync-job.js';
import { captureLogger } from '../support/capture-logger.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';

const { defer, harness } = cleanupAfterEach();

/** Every value stored under `prefix:` in Redis, whatever the key's type, as one text. */
async function dumpPrefix(redis: Redis, prefix: string): Promise<string> {
  const parts: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    for (const key of keys) {
      const type = await redis.type(key);
      let value: unknown;
      if (type === 'string') value = await redis.get(key);
      else if (type === 'hash') value = await redis.hgetall(key);
      else if (type === 'list') value = await redis.lrange(key, 0, -1);
      else if (type === 'set') value = await redis.smembers(key);
      else if (type === 'zset') value = await redis.zrange(key, '0', '-1', 'WITHSCORES');
      else if (type === 'stream') value = await redis.xrange(key, '-', '+');
      parts.push(`${key} ${type} ${JSON.stringify(value)}`);
    }
    cursor = next;
  } while (cursor !== '0');
  return parts.join('\n');
}

describe('Redis losing its keys', () => {
  it('sync ends with its run summary when Redis loses the job mid-run, instead of hanging', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { jobs: 600 } }, latencyMs: 20 },
      env: { HIRESYNC_PER_PAGE: '50' },
    });
    const redis = new Redis(h.env.REDIS_URL as string);
    defer(() => redis.disconnect());
    let flushed: Promise<void> | undefined;
    // No deadline here: a sync that hangs fails the test by its timeout.
    const outcome = await h.sync(['jobs'], 'auto', {
      onProgress: (p) => {
        // As FLUSHDB would: every key of this deployment, the job's hash included.
        if (p.pages === 3 && !flushed) flushed = deletePrefix(redis, h.config.redisPrefix);
      },
    });
    expect(flushed).toBeDefined();
    expect(outcome).toMatchObject([{ resource: 'jobs', ok: true, summary: { records: 600 } }]);
    expect(await h.liveIds('jobs')).toEqual(h.expectedIds('jobs'));
  }, 40_000);

  it('the worker re-creates its job schedulers after Redis lost them, and /healthz answers 503 "missing" meanwhile', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { jobs: 30 } } },
      env: { HIRESYNC_RESOURCES: 'jobs', HIRESYNC_INCREMENTAL_EVERY: '1s' },
    });
    const redis = new Redis(h.env.REDIS_URL as string);
    defer(() => redis.disconnect());
    const { spawn } = await import('node:child_process');
    const { CLI, CLI_CWD } = await import('../support/run-cli.js');
    const child = spawn(process.execPath, [CLI, 'worker'], {
      cwd: CLI_CWD,
      env: { PATH: process.env.PATH, ...h.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.resume();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    defer(async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    });
    const port = await waitFor(async () => /"port":(\d+)/.exec(out)?.[1]);
    const health = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok', schedules: 'ok' } });
    const runs = async () =>
      Number(
        (
          await h.database.db
            .withSchema('public')
            .selectFrom('sync_runs')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    await waitFor(async () => (await runs()) >= 1);

    // Redis loses everything (FLUSHDB, failover to an empty replica).
    await deletePrefix(redis, h.config.redisPrefix);
    const lost = await health();
    expect(lost).toMatchObject({
      status: 503,
      body: {
        status: 'unhealthy',
        schedules: 'missing',
        missingSchedules: expect.arrayContaining(['incremental:jobs', 'full:jobs']),
      },
    });
    const before = await runs();
    await waitFor(async () => (await health()).status === 200, 10_000);
    expect(out).toContain('job schedulers missing from Redis');
    // And the schedules run again.
    await waitFor(async () => (await runs()) > before, 15_000);
  }, 60_000);

  it('the schedule keeper notices missing job schedulers on its own and re-creates them', async () => {
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    const prefix = `test-${randomUUID()}`;
    const queue = createSyncQueue(redis, prefix, undefined, { fullWindowMs: 3_600_000 });
    const log = captureLogger();
    const config = {
      resources: ['jobs', 'tracking_links'] as const,
      incrementalEveryMs: 900_000,
      fullCron: '0 3 * * *',
      fullWindowMs: 3_600_000,
      runAttempts: 3,
      runBackoffMs: 1000,
    };
    const targets = async () =>
      config.resources.map((resource) => ({ account: 'default', resource }));
    const keeper = new ScheduleKeeper({
      queue,
      config,
      targets,
      logger: log.logger,
      intervalMs: 200,
    });
    defer(async () => {
      await keeper.stop();
      await queue.obliterate({ force: true });
      await queue.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
    });
    await keeper.upsertAll();
    keeper.start(redis);
    expect(await keeper.missing()).toEqual([]);
    await deletePrefix(redis, prefix);
    // The log line follows the upserts: wait for both.
    await waitFor(
      async () =>
        (await queue.getJobSchedulers()).length === 4 &&
        log.text().includes('job schedulers updated'),
      5000,
    );
    expect(await keeper.missing()).toEqual([]);
  });
});

/** What the fake API sends back when it refuses: everything it was sent. */
interface EchoServer {
  url: string;
  token: string;
  close: () => Promise<void>;
}

/**
 * A token service and list API whose refusals echo the request's
 * Authorization header and body, as some misconfigured gateways do.
 */
async function startEchoServer(refuse: 'token' | 'list'): Promise<EchoServer> {
  const token = `tok-${randomBytes(16).toString('hex')}`;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      const echo = `you sent Authorization: ${req.headers.authorization ?? ''} and body ${body}`;
      const send = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.method === 'POST' && req.url === '/oauth/token') {
        if (refuse === 'token') send(401, { error: 'invalid_client', error_description: echo });
        else send(200, { access_token: token, token_type: 'bearer', expires_in: 3600 });
      } else if (req.url?.startsWith('/v3/')) {
        send(403, { message: echo, errors: [echo] });
      } else send(404, { message: echo });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('secrets echoed back by the API', () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  for (const refuse of ['list', 'token'] as const) {
    it(`never stores or prints a token or credential that a ${refuse === 'list' ? '403 from the list' : '401 from the token endpoint'} echoes`, async () => {
      const server = await startEchoServer(refuse);
      defer(() => server.close());
      database = await createTestDatabase(inject('databaseUrl'));
      const clientId = 'echo-client';
      const secret = `s3cret/+ ${randomBytes(8).toString('hex')}`;
      const basic = Buffer.from(`${clientId}:${secret}`).toString('base64');
      const prefix = `test-${randomUUID()}`;
      const env = {
        HIRESYNC_BASE_URL: server.url,
        HIRESYNC_AUTH_URL: `${server.url}/oauth`,
        HIRESYNC_CLIENT_ID: clientId,
        HIRESYNC_CLIENT_SECRET: secret,
        DATABASE_URL: database.url,
        REDIS_URL: inject('redisUrl'),
        HIRESYNC_REDIS_PREFIX: prefix,
        HIRESYNC_RUN_BACKOFF: '100ms',
        HIRESYNC_RUN_ATTEMPTS: '2',
        LOG_LEVEL: 'debug',
      };
      const redis = new Redis(inject('redisUrl'));
      defer(async () => {
        await deletePrefix(redis, prefix);
        redis.disconnect();
      });
      const sync = await runCli(['sync', '--resource', 'jobs'], env);
      expect(sync.code).toBe(1);
      expect(sync.stdout).toMatch(
        refuse === 'list' ? /failed: 403 from \/v3\/jobs/ : /refused \(401\)/,
      );
      const status = await runCli(['status'], env);
      expect(status.code).toBe(0);
      const runs = await database.db
        .withSchema('public')
        .selectFrom('sync_runs')
        .selectAll()
        .execute();
      expect(runs).toMatchObject([
        { outcome: 'failed', error: expect.stringContaining('[redacted]') },
      ]);
      const stored = await dumpPrefix(redis, prefix);
      // sync's own queue (sync-once-<uuid>) is removed at its end: none of its jobs is left behind.
      expect(stored).not.toMatch(/:sync-once-/);
      const everything = [
        JSON.stringify(runs),
        stored,
        sync.stdout,
        sync.stderr,
        status.stdout,
        status.stderr,
      ].join('\n');
      for (const value of [
        server.token,
        secret,
        basic,
        encodeURIComponent(secret),
        new URLSearchParams({ s: secret }).toString().slice(2),
      ]) {
        expect(everything).not.toContain(value);
      }
    }, 60_000);
  }
});
