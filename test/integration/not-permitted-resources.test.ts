import { sql } from 'kysely';
// A partner app holds one scope per list (`harvest:NAME:list`); a list whose
// scope the customer's grant lacks answers 403 for that list only. Its run
// fails at once (one request, no retry, no sweep), `status` names it not
// permitted with the scope to ask for, its scheduled incremental runs are
// skipped until a full run succeeds, and the account's other resources go on.
import { describe, expect, it } from 'vitest';
import type { ResourceName } from '../../src/config/load-config.js';
import { main } from '../../src/main.js';
import { runOnce } from '../../src/queue/run-once.js';
import { enqueueRun, type SyncJobResult } from '../../src/queue/sync-job.js';
import type { RequestedMode } from '../../src/sync/run-resource.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import type { PartnerHarness } from '../support/partner-harness.js';

const { partner, defer } = cleanupAfterEach();

const RESOURCES: ResourceName[] = ['jobs', 'job_posts', 'tracking_links'];
const EVERY_SCOPE = RESOURCES.map((r) => `harvest:${r}:list`);
const WITHOUT_JOB_POSTS = EVERY_SCOPE.filter((s) => s !== 'harvest:job_posts:list');

/** One run of each of acme's resources in this process, as `hiresync sync --account acme`. */
async function syncAll(h: PartnerHarness, mode: RequestedMode) {
  const app = h.app();
  try {
    return await runOnce(
      app,
      RESOURCES.map((resource) => ({ account: 'acme', resource })),
      mode,
    );
  } finally {
    await app.close();
  }
}

async function liveCount(h: PartnerHarness, resource: ResourceName): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from ${sql.table(`hiresync.data_${resource}`)}
    where account = 'acme' and deleted_at is null`.execute(h.database.db);
  return rows[0]?.n ?? 0;
}

async function runsOf(h: PartnerHarness, resource: ResourceName) {
  const { rows } = await sql<{ mode: string; outcome: string; error: string | null }>`
    select mode, outcome, error from hiresync.data_sync_runs
    where account = 'acme' and resource = ${resource} order by id`.execute(h.database.db);
  return rows;
}

async function status(h: PartnerHarness): Promise<string> {
  const io = captureIo();
  expect(await main(['status', '--account', 'acme'], h.env, io)).toBe(0);
  return io.out();
}

describe('a resource whose scope the partner grant lacks', () => {
  it('fails its run at once without sweeping, shows as not permitted with the scope, skips its incremental ticks until a full run succeeds; the other resources go on', async () => {
    const h = await partner({ resourceScopes: true, partnerScopes: EVERY_SCOPE });
    expect((await syncAll(h, 'full')).every((o) => o.ok)).toBe(true);
    const jobPostsLive = await liveCount(h, 'job_posts');
    expect(jobPostsLive).toBe(30);

    // The customer's grant loses the job posts scope.
    h.sim.setPartnerScopes('acme', WITHOUT_JOB_POSTS);
    const requestsBefore = h.sim.statsOf('acme').listRequests;
    const outcomes = await syncAll(h, 'full');
    expect(outcomes).toMatchObject([
      { resource: 'jobs', ok: true },
      {
        resource: 'job_posts',
        ok: false,
        error: expect.stringMatching(/^403 from \/v3\/job_posts: .*harvest:job_posts:list/),
      },
      { resource: 'tracking_links', ok: true },
    ]);
    // One 403, no retry (HIRESYNC_RUN_ATTEMPTS is 2); the others read their 3 pages each.
    expect(h.sim.statsOf('acme').byStatus['403']).toBe(1);
    expect(h.sim.statsOf('acme').listRequests - requestsBefore).toBe(1 + 3 + 3);
    // No sweep: the job posts stored stay live.
    expect(await liveCount(h, 'job_posts')).toBe(jobPostsLive);

    const shown = await status(h);
    expect(shown).toMatch(
      /^acme\s+job_posts\s+full\b.*\bnot permitted\s.*ask for scope harvest:job_posts:list/m,
    );
    expect(shown).toMatch(/^acme\s+jobs\s+full\b.*\bsucceeded\b/m);
    expect(shown).toContain('acme/job_posts: not permitted: ask for scope harvest:job_posts:list');

    // The next incremental tick: job posts is skipped (no request, no run), jobs runs.
    const app = h.app();
    let closed = false;
    defer(async () => {
      if (!closed) await app.close();
    });
    app.startWorker();
    const tick = async (resource: ResourceName) => {
      const job = await enqueueRun(
        app.queue,
        { account: 'acme', resource, requested: 'auto', origin: 'schedule' },
        h.config,
      );
      return waitFor(async () => {
        const done = await app.queue.getJob(job.id as string);
        return done?.finishedOn ? (done.returnvalue as SyncJobResult) : undefined;
      });
    };
    const runsBefore = (await runsOf(h, 'job_posts')).length;
    const requestsBeforeTick = h.sim.statsOf('acme').listRequests;
    expect(await tick('job_posts')).toEqual({
      skipped: 'not permitted (scope harvest:job_posts:list)',
    });
    expect(h.sim.statsOf('acme').listRequests).toBe(requestsBeforeTick);
    expect((await runsOf(h, 'job_posts')).length).toBe(runsBefore);
    expect(await tick('jobs')).toMatchObject({ account: 'acme', mode: 'incremental' });
    closed = true;
    await app.close();

    // The scope is granted: the next full run succeeds and clears it.
    h.sim.setPartnerScopes('acme', EVERY_SCOPE);
    expect((await syncAll(h, 'full')).every((o) => o.ok)).toBe(true);
    expect((await runsOf(h, 'job_posts')).map((r) => r.outcome)).toEqual([
      'succeeded',
      'failed',
      'succeeded',
    ]);
    const cleared = await status(h);
    expect(cleared).not.toContain('not permitted');
    expect(cleared).toMatch(/^acme\s+job_posts\s+full\b.*\bsucceeded\b/m);
  });

  it('every resource answering 403 makes status say the authorizing user may not be a site administrator', async () => {
    const h = await partner({ resourceScopes: true, partnerScopes: EVERY_SCOPE });
    h.sim.setForbidden('acme');
    const outcomes = await syncAll(h, 'full');
    expect(outcomes.every((o) => !o.ok)).toBe(true);
    const first = outcomes[0];
    expect(first && !first.ok && first.error).toMatch(
      /not permitted: the credential lacks this list's scope harvest:jobs:list .*or the authorizing user must be a site administrator/,
    );
    const shown = await status(h);
    expect(shown).toContain(
      'every resource answered 403: the authorizing user is most likely not a site administrator',
    );
  });
});
