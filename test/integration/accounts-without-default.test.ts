import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { createQueueRedis } from '../../src/queue/redis.js';
import { createSyncQueue } from '../../src/queue/sync-job.js';
import { captureLogger } from '../support/capture-logger.js';
import { createTestDatabase } from '../support/databases.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import { runCli } from '../support/run-cli.js';
import { clearRedisPrefix, PARTNER_APP_ENV, servicesEnv } from '../support/test-env.js';

const { defer, accounts, cli } = cleanupAfterEach();

/** The rows of a table the CLI printed (after its header and rule), split into cells. */
function tableRows(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n\n')[0]
    ?.split('\n')
    .slice(2)
    .map((line) => line.split(/\s{2,}/)) as string[][];
}

/** A migrated database with nothing registered, and the environment of a deployment on it without credentials. */
async function emptyDeployment(extra: Record<string, string> = {}) {
  const database = await createTestDatabase(inject('databaseUrl'));
  const env = {
    ...servicesEnv(database.url),
    HIRESYNC_BASE_URL: 'http://127.0.0.1:9',
    HIRESYNC_HTTP_PORT: '0',
    ...extra,
  };
  defer(async () => {
    await database.drop();
    await clearRedisPrefix(env);
  });
  expect((await runCli(['migrate'], env)).code).toBe(0);
  return { database, env };
}

describe('a deployment without the environment credentials', () => {
  it('syncs and schedules only the registered accounts; status, accounts list, metrics and the all_accounts views show no default', async () => {
    const h = await accounts({
      accounts: ['alpha', 'beta'],
      withoutDefault: true,
      records: 15,
      env: { HIRESYNC_RESOURCES: 'jobs,job_posts', HIRESYNC_INCREMENTAL_EVERY: '1s' },
    });
    const sync = await runCli(['sync'], h.env);
    expect(sync.code, sync.stderr).toBe(0);
    expect(
      tableRows(sync.stdout).map(([account, resource, , , , , , , outcome]) => [
        account,
        resource,
        outcome,
      ]),
    ).toEqual([
      ['alpha', 'jobs', 'succeeded'],
      ['alpha', 'job_posts', 'succeeded'],
      ['beta', 'jobs', 'succeeded'],
      ['beta', 'job_posts', 'succeeded'],
    ]);
    expect(await h.liveIds('alpha', 'jobs')).toEqual(h.expectedIds('alpha', 'jobs'));
    // Nothing ran as default: its schema holds no run, and the simulator saw no token of it.
    const { rows: publicRuns } = await sql<{ n: string }>`
      select count(*) as n from public.sync_runs`.execute(h.database.db);
    expect(Number(publicRuns[0]?.n)).toBe(0);
    expect(h.sim.statsOf('default')).toMatchObject({ listRequests: 0, tokensIssued: 0 });

    const status = await runCli(['status'], h.env);
    expect(status.code, status.stderr).toBe(0);
    const shown = new Set(tableRows(status.stdout).map(([account]) => account));
    expect([...shown].sort()).toEqual(['alpha', 'beta']);
    const list = await runCli(['accounts', 'list'], h.env);
    expect(tableRows(list.stdout).map(([account]) => account)).toEqual(['alpha', 'beta']);
    expect((await runCli(['status', '--account', 'default'], h.env)).code).toBe(2);

    // The worker: schedules of alpha and beta only, runs them, and its metrics name no default.
    const worker = cli(['worker'], h.env);
    const port = await waitFor(async () => /"port":(\d+)/.exec(worker.stdout())?.[1]);
    expect(worker.stdout()).toContain('"accounts":2');
    const redis = createQueueRedis(h.config.redis, captureLogger().logger, 'test');
    defer(() => redis.disconnect());
    const queue = createSyncQueue(redis, h.config.redisPrefix);
    defer(() => queue.close());
    const keys = (await queue.getJobSchedulers()).map((s) => s.key).sort();
    expect(keys).toEqual(
      [
        'full:alpha:job_posts',
        'full:alpha:jobs',
        'full:beta:job_posts',
        'full:beta:jobs',
        'incremental:alpha:job_posts',
        'incremental:alpha:jobs',
        'incremental:beta:job_posts',
        'incremental:beta:jobs',
      ].sort(),
    );
    const runs = async (account: string) => {
      const { rows } = await sql<{ n: string }>`
        select count(*) as n from ${sql.id(account, 'sync_runs')}`.execute(h.database.db);
      return Number(rows[0]?.n);
    };
    await waitFor(async () => (await runs('alpha')) > 2 && (await runs('beta')) > 2);
    const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const metrics = await waitFor(async () => {
      const text = await scrape();
      return /hiresync_run_duration_seconds_count\{account="alpha"/.test(text) &&
        /hiresync_run_duration_seconds_count\{account="beta"/.test(text)
        ? text
        : undefined;
    });
    expect(metrics).not.toContain('account="default"');
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    worker.child.kill('SIGTERM');
    expect(await worker.exit).toBe(0);

    const { rows: unioned } = await sql<{ account: string }>`
      select distinct account from all_accounts.sync_runs order by account`.execute(h.database.db);
    expect(unioned.map((r) => r.account)).toEqual(['alpha', 'beta']);
  }, 90_000);

  it('worker and sync exit 2 saying what to do when no account is registered and no partner app is configured; status says there is no account', async () => {
    const { env } = await emptyDeployment();
    expect(await runCli(['status'], env)).toMatchObject({
      code: 0,
      stdout:
        "no account: the environment sets no credentials and none is registered (see 'hiresync accounts add', or 'hiresync accounts invite' for a partner app's customers)\n",
    });
    for (const command of ['worker', 'sync']) {
      const result = await runCli([command], env);
      expect(result.code, command).toBe(2);
      expect(result.stderr, command).toBe(
        "hiresync: no account to sync: the environment sets no credentials and no account is registered in this database; register one with 'hiresync accounts add NAME --client-id ID' (or --api-key; the secret on standard input), or set the environment's credentials (HIRESYNC_CLIENT_ID and HIRESYNC_CLIENT_SECRET, or HIRESYNC_API_KEY) for the account default\n",
      );
    }
  });

  it('a partner deployment with no account yet: the worker starts and waits for connects, sync exits 2 saying none has connected', async () => {
    const { env } = await emptyDeployment({
      ...PARTNER_APP_ENV,
      HIRESYNC_AUTH_URL: 'http://127.0.0.1:9/oauth',
    });
    const sync = await runCli(['sync'], env);
    expect(sync.code).toBe(2);
    expect(sync.stderr).toContain('no customer has connected the partner app');
    const worker = cli(['worker'], env);
    await waitFor(async () => worker.stdout().includes('"msg":"worker started"'));
    expect(worker.stdout()).toMatch(/"accounts":0.*"waiting":"no enabled account yet/);
    worker.child.kill('SIGTERM');
    expect(await worker.exit, `${worker.stdout()}\n${worker.stderr()}`).toBe(0);
  });

  it('sync exits 2 naming the accounts when every registered account is disabled', async () => {
    const h = await accounts({ accounts: ['alpha'], withoutDefault: true });
    await h.store.setState('alpha', 'disabled');
    const result = await runCli(['sync'], h.env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'every registered account is disabled, needs reauthorization or had its credentials refused (alpha: disabled)',
    );
  });
});
