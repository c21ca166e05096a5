import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { registryOf } from '../../src/commands/account-options.js';
import { runOnce } from '../../src/queue/run-once.js';
import { enqueueRun } from '../../src/queue/sync-job.js';
import { Secret } from '../../src/secret.js';
import { Metrics } from '../../src/status/metrics.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import type { Database } from '../../src/warehouse/tables.js';
import { targetsOf } from '../support/accounts-harness.js';
import { captureLogger } from '../support/capture-logger.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { accounts: harness, defer } = cleanupAfterEach();

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

/** The value of the one series of `text` that `name{labels}` names, or undefined. */
function seriesValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Epoch seconds of the newest succeeded run of `resource` of `account`, as Postgres computes them. */
async function lastSucceeded(
  db: Kysely<Database>,
  account: string,
  resource: string,
): Promise<number> {
  const { rows } = await sql<{ at: number }>`
    select extract(epoch from finished_at)::float8 as at from hiresync.data_sync_runs
    where account = ${account} and resource = ${resource} and outcome = 'succeeded'
    order by id desc limit 1`.execute(db);
  const row = rows[0];
  if (!row) throw new Error(`no succeeded run of ${account}/${resource}`);
  return row.at;
}

describe('metrics a scrape reads from Postgres and Redis', () => {
  it("knows each account's last success from sync_runs at a restarted worker's first scrape", async () => {
    const h = await harness({ accounts: ['alpha', 'beta'] });
    await h.sync(targetsOf(['default', 'alpha', 'beta'], ['jobs', 'job_posts']));
    await h.store.setState('beta', 'disabled');

    // A new app, as a worker has after a restart: no run of its own yet.
    const app = h.app();
    defer(() => app.close());
    const text = await app.metrics.registry.metrics();
    for (const account of ['alpha', 'default']) {
      for (const resource of ['jobs', 'job_posts']) {
        const value = seriesValue(
          text,
          `hiresync_last_success_timestamp_seconds{account="${account}",resource="${resource}"}`,
        );
        expect(value).toBe(await lastSucceeded(h.database.db, account, resource));
      }
    }
    // A disabled account's runs are not watched.
    expect(text).not.toContain('account="beta",resource="jobs"');
  });

  it("knows whether each resource's latest finished run failed at a restarted worker's first scrape, not permitted counting as failed", async () => {
    const h = await harness({ accounts: ['alpha', 'beta', 'gamma', 'delta'] });
    // beta: a malformed body fails its run; gamma: every list answers 403.
    h.sim.inject({ kind: 'malformed-body' }, 1, 'beta');
    h.sim.setForbidden('gamma');
    const targets = targetsOf(['alpha', 'beta', 'gamma', 'delta'], ['jobs']);
    expect((await h.sync(targets, 'full')).map((o) => o.ok)).toEqual([true, false, false, true]);
    // delta failed once, then succeeded: its latest finished run stands.
    h.sim.inject({ kind: 'malformed-body' }, 1, 'delta');
    expect((await h.sync(targetsOf(['delta'], ['jobs']), 'full'))[0]?.ok).toBe(false);
    expect((await h.sync(targetsOf(['delta'], ['jobs']), 'full'))[0]?.ok).toBe(true);
    // alpha's next run is in flight: its latest finished run still counts.
    await sql`insert into hiresync.data_sync_runs (account, resource, mode, started_at)
      values ('alpha', 'jobs', 'incremental', ${new Date().toISOString()}::timestamptz)`.execute(
      h.database.db,
    );

    // A new app, as a worker has after a restart: no run of its own yet.
    const app = h.app();
    defer(() => app.close());
    const text = await app.metrics.registry.metrics();
    const failed = (account: string) =>
      seriesValue(text, `hiresync_last_run_failed{account="${account}",resource="jobs"}`);
    expect([failed('alpha'), failed('beta'), failed('gamma'), failed('delta')]).toEqual([
      0, 1, 1, 0,
    ]);
    // Never run: no series (HiresyncRunStale and status say so).
    expect(text).not.toContain('hiresync_last_run_failed{account="alpha",resource="job_posts"}');
  });

  it('leaves out resources no longer synced, and keeps the values read last while Postgres is unreachable', async () => {
    const h = await harness({ accounts: ['alpha'] });
    await h.sync(targetsOf(['alpha'], ['jobs', 'job_posts']));
    const db = createDatabase(h.database.url, { max: 1 });
    const metrics = new Metrics({
      defaultMetrics: false,
      db,
      synced: async () => (_account, resource) => resource === 'jobs',
    });
    const first = await metrics.registry.metrics();
    const jobs = 'hiresync_last_success_timestamp_seconds{account="alpha",resource="jobs"}';
    expect(seriesValue(first, jobs)).toBe(await lastSucceeded(h.database.db, 'alpha', 'jobs'));
    expect(first).not.toContain('resource="job_posts"');

    await db.destroy();
    const second = await metrics.registry.metrics();
    expect(seriesValue(second, jobs)).toBe(seriesValue(first, jobs));
  });

  it('counts the queued jobs by state', async () => {
    const h = await harness({ accounts: [] });
    const app = h.app();
    defer(() => app.close());
    const run = { requested: 'auto', origin: 'cli' } as const;
    await enqueueRun(app.queue, { ...run, resource: 'jobs' }, h.config);
    await enqueueRun(app.queue, { ...run, resource: 'job_posts' }, h.config);
    await app.queue.add('later', { ...run, resource: 'tracking_links' }, { delay: 3_600_000 });
    const text = await app.metrics.registry.metrics();
    expect(seriesValue(text, 'hiresync_queue_jobs{state="waiting"}')).toBe(2);
    expect(seriesValue(text, 'hiresync_queue_jobs{state="delayed"}')).toBe(1);
    expect(seriesValue(text, 'hiresync_queue_jobs{state="active"}')).toBe(0);
    expect(seriesValue(text, 'hiresync_queue_jobs{state="failed"}')).toBe(0);
  });

  it('counts token requests the token endpoint answered with a token, and those it refused, each outcome from 0', async () => {
    const h = await harness({ accounts: ['alpha'] });
    await h.store.add({
      name: 'wrong',
      baseUrl: h.sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: h.sim.authUrl,
        clientId: 'alpha-client',
        clientSecret: new Secret('not-the-secret'),
      },
    });
    await migrateAll(h.database.db);
    const app = h.app();
    defer(() => app.close());
    await runOnce(app, targetsOf(['alpha', 'wrong'], ['jobs']), 'auto');
    const text = await app.metrics.registry.metrics();
    expect(seriesValue(text, 'hiresync_token_requests_total{account="alpha",outcome="ok"}')).toBe(
      1,
    );
    expect(
      seriesValue(text, 'hiresync_token_requests_total{account="wrong",outcome="refused"}'),
    ).toBeGreaterThanOrEqual(1);
    // Every outcome's series is there from the account's first use, at 0 until counted.
    for (const [account, outcome] of [
      ['alpha', 'refused'],
      ['alpha', 'error'],
      ['wrong', 'ok'],
      ['wrong', 'error'],
    ]) {
      expect(
        seriesValue(
          text,
          `hiresync_token_requests_total{account="${account}",outcome="${outcome}"}`,
        ),
      ).toBe(0);
    }
  });

  it('counts rate-limit waits per resource, each at most the time its run took, though concurrent runs wait together', async () => {
    const h = await harness({
      accounts: ['alpha'],
      simulator: { rateLimit: { limit: 4, windowMs: 1000 }, rateLimitHeaders: true },
      env: { HIRESYNC_RATE_LIMIT_WINDOW: '1s', HIRESYNC_CONCURRENCY: '2' },
    });
    const app = h.app();
    defer(() => app.close());
    const started = Date.now();
    const outcomes = await runOnce(app, targetsOf(['alpha'], ['jobs', 'job_posts']), 'full');
    const elapsed = (Date.now() - started) / 1000;
    expect(outcomes.map((o) => o.ok)).toEqual([true, true]);
    const text = await app.metrics.registry.metrics();
    const waited = (resource: string) =>
      seriesValue(
        text,
        `hiresync_rate_limit_wait_seconds_total{account="alpha",resource="${resource}"}`,
      ) ?? 0;
    // 2 × 5 pages at 4 requests a second: both runs wait.
    expect(waited('jobs')).toBeGreaterThan(0);
    expect(waited('job_posts')).toBeGreaterThan(0);
    for (const resource of ['jobs', 'job_posts']) expect(waited(resource)).toBeLessThan(elapsed);
    expect(text).not.toMatch(/hiresync_rate_limit_wait_seconds_total\{account="alpha"\}/);
  });

  it('states the version of hiresync it runs', async () => {
    const text = await new Metrics({ defaultMetrics: false }).registry.metrics();
    expect(seriesValue(text, `hiresync_build_info{version="${VERSION}"}`)).toBe(1);
  });
});

describe('the debug log of API requests', () => {
  it('logs one line per request with method, path, status, time, allowance, account, resource, run and page, and no secret or cursor', async () => {
    const h = await harness({
      accounts: ['alpha'],
      simulator: { rateLimit: { limit: 1000, windowMs: 60_000 } },
    });
    const log = captureLogger('debug');
    const app = createApp(h.config, log.logger, {
      defaultMetrics: false,
      registry: registryOf(h.config),
    });
    defer(() => app.close());
    const [result] = await runOnce(app, targetsOf(['alpha'], ['jobs']), 'full');
    expect(result?.ok).toBe(true);

    const lines = log.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const line of lines) {
      expect(line).toMatchObject({ pid: process.pid, hostname: hostname() });
    }
    const requests = lines.filter((l) => l.msg === 'api request');
    const lists = requests.filter((l) => l.path === '/v3/jobs');
    // Per page 10, more than 40 records: several pages, the later ones by cursor.
    expect(lists.length).toBeGreaterThan(3);
    expect(lists.map((l) => l.page)).toEqual(lists.map((_, i) => i + 1));
    for (const line of lists) {
      expect(line).toMatchObject({
        method: 'GET',
        status: 200,
        account: 'alpha',
        resource: 'jobs',
        runId: expect.any(String),
      });
      expect(line.ms).toEqual(expect.any(Number));
      expect(line.remaining).toEqual(expect.any(Number));
    }
    const token = requests.filter((l) => l.method === 'POST');
    expect(token).toEqual([
      expect.objectContaining({
        path: new URL(`${h.sim.authUrl}/token`).pathname,
        status: 200,
        ms: expect.any(Number),
      }),
    ]);
    const text = requests.map((l) => JSON.stringify(l)).join('\n');
    for (const secret of ['alpha-secret', 'Bearer', 'Basic', 'redacted', 'cursor', '?']) {
      expect(text).not.toContain(secret);
    }
  });
});
