import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { runKey, schemaOf } from '../../src/account-name.js';
import { ScheduleKeeper } from '../../src/queue/schedule-keeper.js';
import { enqueueRun } from '../../src/queue/sync-job.js';
import type { ScheduleTarget } from '../../src/queue/upsert-schedules.js';
import {
  type AccountsHarness,
  secretOf,
  startAccountsHarness,
  targetsOf,
} from '../support/accounts-harness.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

async function harness(options: Parameters<typeof startAccountsHarness>[0]) {
  const h = await startAccountsHarness(options);
  defer(() => h.close());
  return h;
}

/** Every key under the harness's Redis prefix, with its value when it is a string. */
async function redisDump(h: AccountsHarness): Promise<string> {
  const redis = new Redis(h.env.REDIS_URL as string);
  try {
    const keys = await redis.keys(`${h.config.redisPrefix}:*`);
    const parts: string[] = [];
    for (const key of keys) {
      const type = await redis.type(key);
      const value =
        type === 'string'
          ? await redis.get(key)
          : type === 'hash'
            ? JSON.stringify(await redis.hgetall(key))
            : '';
      parts.push(`${key}=${value}`);
    }
    return parts.join('\n');
  } finally {
    redis.disconnect();
  }
}

describe('runs of several accounts', () => {
  it("land each in its account's schema, equal to what the API serves that account, and all_accounts unions them", async () => {
    const h = await harness({ accounts: ['alpha', 'beta'] });
    const outcomes = await h.sync(targetsOf(['default', 'alpha', 'beta']));
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(outcomes.map((o) => `${o.account}/${o.resource}`)).toEqual([
      'default/jobs',
      'default/job_posts',
      'default/tracking_links',
      'alpha/jobs',
      'alpha/job_posts',
      'alpha/tracking_links',
      'beta/jobs',
      'beta/job_posts',
      'beta/tracking_links',
    ]);
    const seen = new Set<string>();
    for (const account of ['default', 'alpha', 'beta']) {
      for (const resource of ['jobs', 'job_posts', 'tracking_links']) {
        const live = await h.liveIds(account, resource);
        expect(live, `${account}/${resource}`).toEqual(h.expectedIds(account, resource));
        for (const id of live) seen.add(`${resource}:${id}`);
      }
    }
    const { rows } = await sql<{ account: string; n: string }>`
      select account, count(*) as n from all_accounts.jobs group by account order by account`.execute(
      h.database.db,
    );
    expect(rows).toEqual(
      ['alpha', 'beta', 'default'].map((account) => ({
        account,
        n: String(h.expectedIds(account, 'jobs').length),
      })),
    );
    // Each account's sync_runs says what it ran, and nothing of the others.
    for (const account of ['alpha', 'beta']) {
      const runs = await h.database.db
        .withSchema(schemaOf(account))
        .selectFrom('sync_runs')
        .select(['resource', 'outcome'])
        .orderBy('resource')
        .execute();
      expect(runs).toEqual([
        { resource: 'job_posts', outcome: 'succeeded' },
        { resource: 'jobs', outcome: 'succeeded' },
        { resource: 'tracking_links', outcome: 'succeeded' },
      ]);
    }
  });

  it("one account's 403 fails only its runs, at once; the other accounts complete", async () => {
    const h = await harness({ accounts: ['alpha', 'beta'] });
    h.sim.setForbidden('alpha');
    const outcomes = await h.sync(targetsOf(['default', 'alpha', 'beta'], ['jobs']));
    expect(outcomes).toMatchObject([
      { account: 'default', ok: true },
      { account: 'alpha', ok: false, error: expect.stringMatching(/^403 from \/v3\/jobs/) },
      { account: 'beta', ok: true },
    ]);
    // Failed without retries: one list request.
    expect(h.sim.statsOf('alpha').listRequests).toBe(1);
    const [run] = await h.database.db
      .withSchema('alpha')
      .selectFrom('sync_runs')
      .select(['outcome', 'error'])
      .execute();
    expect(run).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/^403/) });
    expect(await h.liveIds('beta', 'jobs')).toEqual(h.expectedIds('beta', 'jobs'));
  });

  it("renew a revoked token for that account's credential only; tokens are shared per credential and sealed in Redis", async () => {
    const h = await harness({ accounts: ['alpha', 'beta'] });
    const jobs = targetsOf(['default', 'alpha', 'beta'], ['jobs']);
    expect((await h.sync(jobs)).every((o) => o.ok)).toBe(true);
    const before = ['default', 'alpha', 'beta'].map((a) => h.sim.statsOf(a).tokensIssued);
    expect(before).toEqual([1, 1, 1]);
    h.sim.revokeTokens('alpha');
    expect((await h.sync(jobs, 'full')).every((o) => o.ok)).toBe(true);
    // A new process reads each account's token from Redis; only alpha's was refused.
    expect(['default', 'alpha', 'beta'].map((a) => h.sim.statsOf(a).tokensIssued)).toEqual([
      1, 2, 1,
    ]);
    const dump = await redisDump(h);
    const tokenKeys = dump.split('\n').filter((line) => /:token:[0-9a-f]+=/.test(line));
    expect(tokenKeys).toHaveLength(3);
    for (const secret of ['default', 'alpha', 'beta'].map(secretOf)) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(Buffer.from(secret).toString('base64'));
    }
    expect(dump).not.toContain(h.env.HIRESYNC_SECRET_KEY);
  });

  it('keep checkpoints per account: an interrupted run of one account resumes alone, from its page', async () => {
    const h = await harness({ accounts: ['alpha', 'beta'], records: 60 });
    const stopped = h.app({
      onProgress: (p) => {
        if (p.account === 'alpha' && p.pages === 2) stopped.shutdown.abort(new Error('test stop'));
      },
    });
    try {
      const outcomes = await import('../../src/queue/run-once.js').then((m) =>
        m.runOnce(stopped, [{ account: 'alpha', resource: 'jobs' }], 'auto'),
      );
      expect(outcomes).toMatchObject([{ account: 'alpha', ok: false, error: 'interrupted' }]);
    } finally {
      await stopped.close();
    }
    const redis = new Redis(h.env.REDIS_URL as string);
    defer(() => redis.disconnect());
    const prefix = h.config.redisPrefix;
    expect(await redis.exists(`${prefix}:checkpoint:alpha:jobs`)).toBe(1);
    expect(await redis.exists(`${prefix}:checkpoint:jobs`)).toBe(0);
    expect(await redis.exists(`${prefix}:checkpoint:beta:jobs`)).toBe(0);
    // beta's run is not held up by alpha's pending checkpoint.
    const [beta] = await h.sync([{ account: 'beta', resource: 'jobs' }]);
    expect(beta).toMatchObject({ ok: true, summary: { resumed: false } });
    const before = h.sim.statsOf('alpha').listRequests;
    const [alpha] = await h.sync([{ account: 'alpha', resource: 'jobs' }]);
    expect(alpha).toMatchObject({ ok: true, summary: { resumed: true, pages: 7 } });
    // Pages 3 to 7 only: the two committed pages are not read again.
    expect(h.sim.statsOf('alpha').listRequests - before).toBe(5);
    expect(await h.liveIds('alpha', 'jobs')).toEqual(h.expectedIds('alpha', 'jobs'));
  });

  it('never run one (account, resource) twice at once, from two workers and a sync', async () => {
    const h = await harness({
      accounts: ['alpha', 'beta'],
      records: 30,
      simulator: { latencyMs: 40 },
    });
    const workers = [h.app(), h.app()];
    for (const app of workers) {
      defer(() => app.close());
      app.startWorker();
    }
    const [first] = workers as [ReturnType<typeof h.app>];
    const targets: ScheduleTarget[] = targetsOf(['alpha', 'beta'], ['jobs', 'job_posts']);
    const queued: Awaited<ReturnType<typeof enqueueRun>>[] = [];
    for (let i = 0; i < 2; i += 1) {
      for (const { account, resource } of targets) {
        queued.push(
          await enqueueRun(
            first.queue,
            { account, resource, requested: 'full', origin: 'cli' },
            h.config,
          ),
        );
      }
    }
    const once = await h.sync(targetsOf(['alpha'], ['jobs']), 'full');
    expect(once).toMatchObject([{ ok: true }]);
    await waitFor(async () => {
      const states = await Promise.all(queued.map((job) => job.getState()));
      return states.every((s) => s === 'completed');
    }, 60_000);
    for (const account of ['alpha', 'beta']) {
      const runs = await h.database.db
        .withSchema(account)
        .selectFrom('sync_runs')
        .select(['resource', 'started_at', 'finished_at', 'outcome'])
        .orderBy('id')
        .execute();
      expect(runs.length).toBe(account === 'alpha' ? 5 : 4);
      expect(runs.every((r) => r.outcome === 'succeeded')).toBe(true);
      for (const resource of ['jobs', 'job_posts']) {
        const mine = runs.filter((r) => r.resource === resource);
        for (let i = 1; i < mine.length; i += 1) {
          const previous = mine[i - 1] as (typeof mine)[number];
          const current = mine[i] as (typeof mine)[number];
          // Timestamps as Postgres prints them, in one zone: text order is time order.
          expect(
            String(current.started_at) >= String(previous.finished_at),
            `${account}/${resource}`,
          ).toBe(true);
        }
      }
    }
  });

  it("skip a disabled account's queued runs, and the worker's schedules follow accounts enabled, disabled and removed", async () => {
    const h = await harness({ accounts: ['alpha', 'beta'] });
    const app = h.app();
    defer(() => app.close());
    const targets = async () =>
      (await app.accounts.enabledNames()).flatMap((account) =>
        h.config.resources.map((resource) => ({ account, resource })),
      );
    const keeper = new ScheduleKeeper({
      queue: app.queue,
      config: h.config,
      targets,
      logger: h.log.logger,
    });
    defer(() => keeper.stop());
    const keys = async () => (await app.queue.getJobSchedulers()).map((s) => s.key ?? s.id).sort();
    await keeper.upsertAll();
    // Two schedules (full, incremental) per resource of each of three accounts.
    const perAccount = 2 * h.config.resources.length;
    expect(await keys()).toHaveLength(3 * perAccount);
    expect(await keys()).toContain(`full:${runKey('alpha', 'jobs')}`);

    await h.store.setState('alpha', 'disabled');
    await keeper.repair();
    expect((await keys()).filter((k) => k?.includes('alpha'))).toEqual([]);
    expect(await keys()).toHaveLength(2 * perAccount);

    app.startWorker();
    const job = await enqueueRun(
      app.queue,
      { account: 'alpha', resource: 'jobs', requested: 'auto', origin: 'schedule' },
      h.config,
    );
    await waitFor(async () => (await job.getState()) === 'completed');
    expect((await app.queue.getJob(job.id as string))?.returnvalue).toEqual({
      skipped: expect.stringMatching(/alpha.*disabled/),
    });
    expect(h.sim.statsOf('alpha').listRequests).toBe(0);

    await h.store.setState('alpha', 'enabled');
    await h.store.remove('beta');
    await keeper.repair();
    expect((await keys()).filter((k) => k?.includes('beta'))).toEqual([]);
    expect((await keys()).filter((k) => k?.includes('alpha'))).toHaveLength(perAccount);
  });

  it('label metrics with the account', async () => {
    const h = await harness({ accounts: ['alpha'] });
    const app = h.app();
    defer(() => app.close());
    const { runOnce } = await import('../../src/queue/run-once.js');
    await runOnce(app, targetsOf(['default', 'alpha'], ['jobs']), 'auto');
    const text = await app.metrics.registry.metrics();
    expect(text).toMatch(/hiresync_pages_total\{account="alpha",resource="jobs"\} [1-9]/);
    expect(text).toMatch(/hiresync_pages_total\{account="default",resource="jobs"\} [1-9]/);
    expect(text).toMatch(/hiresync_http_requests_total\{account="alpha",status="200"\}/);
  });
});
