import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createSyncQueue } from '../../src/queue/sync-job.js';
import { upsertSchedules } from '../../src/queue/upsert-schedules.js';
import { runCli } from '../support/run-cli.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

let h: SyncHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('worker schedules', () => {
  it('are idempotent across restarts and replicas, and drop resources no longer configured', async () => {
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    const prefix = `test-${randomUUID()}`;
    const queue = createSyncQueue(redis, prefix, undefined, { fullWindowMs: 3_600_000 });
    try {
      const config = {
        incrementalEveryMs: 900_000,
        fullCron: '0 3 * * *',
        fullWindowMs: 3_600_000,
        runAttempts: 3,
        runBackoffMs: 1000,
      };
      const targets = (resources: string[]) =>
        resources.map((resource) => ({ account: 'default', resource }));
      await upsertSchedules(queue, config, targets(['jobs', 'job_posts', 'tracking_links']));
      await upsertSchedules(queue, config, targets(['jobs', 'job_posts', 'tracking_links']));
      const all = await queue.getJobSchedulers();
      expect(all.map((s) => s.key ?? s.id).sort()).toEqual([
        'full:job_posts',
        'full:jobs',
        'full:tracking_links',
        'incremental:job_posts',
        'incremental:jobs',
        'incremental:tracking_links',
      ]);
      const full = all.find((s) => (s.key ?? s.id) === 'full:jobs');
      expect(full?.pattern).toBe('0 3 * * *');
      await upsertSchedules(queue, config, targets(['jobs']));
      expect((await queue.getJobSchedulers()).map((s) => s.key ?? s.id).sort()).toEqual([
        'full:jobs',
        'incremental:jobs',
      ]);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      redis.disconnect();
    }
  });
});

describe('hiresync sync and status', () => {
  it('syncs every resource end to end, prints the summary, then reports it in status', async () => {
    h = await startSyncHarness({
      simulator: { dataset: { counts: { jobs: 120, job_posts: 80, tracking_links: 150 } } },
    });
    const sync = await runCli(['sync'], h.env);
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(
      /^resource\s+mode\s+pages\s+records\s+rejected\s+deleted\s+seconds\s+outcome$/m,
    );
    expect(sync.stdout).toMatch(/^tracking_links\s+full\s+1\s+150\s+0\s+0\s+[\d.]+\s+succeeded$/m);
    // Logs go to stderr as JSON lines, one event each, with resource and run id.
    const events = sync.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.find((e) => e.msg === 'page committed')).toMatchObject({
      resource: expect.any(String),
      runId: expect.any(String),
      page: 1,
    });
    expect(sync.stderr).not.toContain('sync-secret');
    const status = await runCli(['status'], h.env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      /^jobs\s+full\s+\S+ \S+\s+\S+ \S+\s+1\s+120\s+succeeded\s+.*\bno\b/m,
    );
  });

  it('exits 1 when a run fails, naming the cause, and status shows the error', async () => {
    h = await startSyncHarness({ simulator: { nonAdminSubs: ['9'] }, env: { HIRESYNC_SUB: '9' } });
    const sync = await runCli(['sync', '--resource', 'jobs'], h.env);
    expect(sync.code).toBe(1);
    expect(sync.stdout).toMatch(/^jobs\s+-.*failed: 403 from \/v3\/jobs/m);
    const status = await runCli(['status'], h.env);
    // A 403 is shown as not permitted, with the scope to ask for.
    expect(status.stdout).toMatch(
      /^jobs\s+full.*not permitted.*ask for scope harvest:jobs:list: 403 from \/v3\/jobs/m,
    );
  });

  it('exits 2 on a resource name that cannot be one and on bad configuration, before connecting', async () => {
    const bad = await runCli(['sync', '--resource', 'sync_runs'], {
      HIRESYNC_BASE_URL: 'https://x.example',
      HIRESYNC_API_KEY: 'k',
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x',
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(bad).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("sync_runs is the name of one of hiresync's own tables"),
    });
    const config = await runCli(['sync'], {
      HIRESYNC_BASE_URL: 'http://example.com',
      HIRESYNC_PER_PAGE: '900',
    });
    expect(config.code).toBe(2);
    for (const name of [
      'HIRESYNC_BASE_URL',
      'HIRESYNC_PER_PAGE',
      'DATABASE_URL',
      'REDIS_URL',
      'HIRESYNC_CLIENT_ID',
    ]) {
      expect(config.stderr).toContain(name);
    }
  });

  it('fails fast with the cause when Redis is unreachable or the tables are missing', async () => {
    h = await startSyncHarness();
    const status = await runCli(['status'], { ...h.env, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(status).toMatchObject({
      code: 1,
      stderr:
        'hiresync status: cannot reach Redis (connect ECONNREFUSED 127.0.0.1:1): check REDIS_URL\n',
    });
    const { databaseUrl } = await import('../support/databases.js');
    const unmigrated = await runCli(['sync'], {
      ...h.env,
      DATABASE_URL: databaseUrl(inject('databaseUrl'), 'postgres'),
    });
    expect(unmigrated.code).toBe(1);
    expect(unmigrated.stderr).toContain(
      "the database has no hiresync tables: run 'hiresync migrate' first",
    );
    // accounts list too: no empty table that reads as "no account".
    const listed = await runCli(['accounts', 'list'], {
      ...h.env,
      DATABASE_URL: databaseUrl(inject('databaseUrl'), 'postgres'),
    });
    expect(listed).toMatchObject({ code: 1, stdout: '' });
    expect(listed.stderr).toContain(
      "the database has no hiresync tables: run 'hiresync migrate' first",
    );
  });
});

describe('command-line usage', () => {
  it('prints the usage of worker, migrate and status on --help, exit 0', async () => {
    for (const [command, first] of [
      ['worker', 'usage: hiresync worker'],
      ['migrate', 'usage: hiresync migrate'],
      ['status', 'usage: hiresync status'],
    ] as const) {
      const help = await runCli([command, '--help']);
      expect(help, command).toMatchObject({ code: 0, stderr: '' });
      expect(help.stdout.startsWith(first), command).toBe(true);
    }
    const sync = await runCli(['sync', '--help']);
    expect(sync).toMatchObject({ code: 0, stdout: expect.stringContaining('--allow-mass-delete') });
  });

  it('says a --resource name is empty and lists the choices, exit 2', async () => {
    const env = {
      HIRESYNC_BASE_URL: 'https://x.example',
      HIRESYNC_API_KEY: 'k',
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x',
      REDIS_URL: 'redis://127.0.0.1:1',
    };
    for (const value of ['', 'jobs,']) {
      const empty = await runCli(['sync', '--resource', value], env);
      expect(empty).toMatchObject({
        code: 2,
        stderr:
          'hiresync: --resource was given an empty resource name; choose from jobs, job_posts, tracking_links, job_boards, sources, referrers (HIRESYNC_RESOURCES)\n',
      });
    }
  });

  it('refuses --allow-mass-delete without --full, exit 2', async () => {
    const result = await runCli(['sync', '--allow-mass-delete'], {
      HIRESYNC_BASE_URL: 'https://x.example',
      HIRESYNC_API_KEY: 'k',
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x',
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(result).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--allow-mass-delete'),
    });
    expect(result.stderr).toContain('--full');
  });
});

describe('REDIS_URL database index', () => {
  it('sync, worker and status fail at preflight, naming REDIS_URL and the index the server refused', async () => {
    h = await startSyncHarness();
    const url = new URL(inject('redisUrl'));
    url.pathname = '/99';
    for (const command of ['status', 'sync', 'worker']) {
      const result = await runCli([command], { ...h.env, REDIS_URL: url.href }, 20_000);
      expect(result.code, command).toBe(1);
      expect(result.stderr, command).toMatch(
        /REDIS_URL selects database 99, which this Redis server refused \(.*DB index is out of range/,
      );
    }
  });

  it('sync, worker, status and accounts disable write no key to any database before they exit', async () => {
    h = await startSyncHarness();
    const prefix = h.env.HIRESYNC_REDIS_PREFIX as string;
    const redis = new Redis(inject('redisUrl'));
    const keysAnywhere = async () => {
      const found: string[] = [];
      const databases = Number((await redis.config('GET', 'databases'))[1]);
      for (let db = 0; db < databases; db += 1) {
        await redis.select(db);
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          found.push(...keys.map((k) => `${db}:${k}`));
          cursor = next;
        } while (cursor !== '0');
      }
      await redis.select(0);
      return found;
    };
    try {
      const url = new URL(inject('redisUrl'));
      url.pathname = '/99';
      expect(await keysAnywhere()).toEqual([]);
      for (const command of [['sync'], ['worker'], ['status'], ['accounts', 'disable', 'acme']]) {
        const result = await runCli(command, { ...h.env, REDIS_URL: url.href }, 20_000);
        expect(result.code, command.join(' ')).toBe(1);
        expect(result.stderr, command.join(' ')).toMatch(
          /REDIS_URL selects database 99, which this Redis server refused/,
        );
        expect(await keysAnywhere(), command.join(' ')).toEqual([]);
      }
    } finally {
      redis.disconnect();
    }
  });
});

describe('deletion guard', () => {
  it('a full sync that would delete most rows fails at once; sync --full --allow-mass-delete confirms it', async () => {
    h = await startSyncHarness({ simulator: { dataset: { counts: { jobs: 20 } } } });
    expect((await runCli(['sync', '--resource', 'jobs'], h.env)).code).toBe(0);
    for (let i = 0; i < 15; i += 1) h.sim.dataset.remove('jobs', i);
    const guarded = await runCli(['sync', '--full', '--resource', 'jobs'], h.env);
    expect(guarded.code).toBe(1);
    expect(guarded.stdout).toMatch(/^jobs\s+-.*failed: /m);
    // Unrecoverable: one attempt, no retry.
    expect(guarded.stderr).not.toContain('retrying from its checkpoint');
    expect(await h.liveIds('jobs')).toHaveLength(20);
    const confirmed = await runCli(
      ['sync', '--full', '--allow-mass-delete', '--resource', 'jobs'],
      h.env,
    );
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toMatch(/^jobs\s+full\s+\d+\s+5\s+0\s+15\s/m);
    expect(await h.liveIds('jobs')).toHaveLength(5);
  });
});
