// hiresync reapply-policy never reports success while a run under the old
// policy is writing: started beside one (its run lock held, sync_runs saying
// running) it waits for it, saying which, or exits 1 naming it; what a run
// under the old policy stored after a completed pass is rewritten by the next
// reapply-policy, never "already applied"; --again passes over every row.
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { runLockKey } from '../../src/warehouse/lock-keys.js';
import type { Database } from '../../src/warehouse/tables.js';
import type { AccountsHarness } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { accounts } = cleanupAfterEach();

const HASH_KEY = Buffer.alloc(32, 7).toString('hex');
const POLICY = 'candidates.emails.value=hash,candidates.phone_numbers=drop';

async function startHarness() {
  return accounts({
    accounts: [],
    env: { HIRESYNC_RESOURCES: 'candidates' },
    simulator: {
      dataset: { counts: { jobs: 0, job_posts: 0, tracking_links: 0, candidates: 30 } },
    },
  });
}

function policyEnv(h: AccountsHarness): Record<string, string> {
  return { ...h.env, HIRESYNC_FIELD_POLICY: POLICY, HIRESYNC_HASH_KEY: HASH_KEY };
}

/** Runs reapply-policy in process; `io.out()` can be read while it runs. */
function reapply(args: string[], env: Record<string, string>) {
  const io = captureIo();
  const done = main(['reapply-policy', '--account', 'default', ...args], env, io).then((code) => ({
    code,
    stdout: io.out(),
    stderr: io.err(),
  }));
  return { io, done };
}

/** Rows of default's candidates (records and every version) that hold an email address in clear. */
async function clearEmails(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from (
      select data::text as t from hiresync.data_candidates_data where account = 'default'
      union all
      select data::text from hiresync.data_candidates_history where account = 'default'
    ) s where t like '%@%'`.execute(db);
  return rows[0]?.n ?? 0;
}

/**
 * A run of default's candidates in progress, as a worker's run holds it: the
 * resource's run lock on a connection of its own, and a `running` row in
 * sync_runs. `end()` marks it succeeded and lets the lock go.
 */
async function runInProgress(h: AccountsHarness) {
  const client = new pg.Client({ connectionString: h.database.url });
  // The test's database is dropped at its end, this connection with it.
  client.on('error', () => {});
  await client.connect();
  await client.query('select pg_advisory_lock($1::bigint)', [runLockKey('candidates').toString()]);
  const { rows } = await client.query<{ id: string }>(
    `insert into hiresync.data_sync_runs (account, resource, mode, started_at)
     values ('default', 'candidates', 'full', now()) returning id::text as id`,
  );
  const id = rows[0]?.id ?? '';
  return {
    id,
    /** What the run's page writes: a candidate's email in clear, as a worker without the policy stores it. */
    writeClear: async () => {
      await client.query(
        `update hiresync.data_candidates_data
         set data = jsonb_set(data, '{emails,0,value}', to_jsonb('old-policy@example.com'::text)),
           changed_at = statement_timestamp()
         where account = 'default' and id = (select min(id) from hiresync.data_candidates_data
           where account = 'default' and data -> 'emails' -> 0 is not null)`,
      );
    },
    end: async () => {
      await client.query(
        `update hiresync.data_sync_runs set outcome = 'succeeded', finished_at = now()
         where account = 'default' and id = $1::bigint`,
        [id],
      );
      await client.end();
    },
  };
}

describe('hiresync reapply-policy beside runs under the old policy', () => {
  it('exits 1 naming the run that writes the resource past --wait, and a later reapply rewrites what runs under the old policy stored after a completed pass', async () => {
    const h = await startHarness();
    const db = h.database.db;
    await h.sync([{ account: 'default', resource: 'candidates' }], 'full');
    expect(await clearEmails(db)).toBeGreaterThan(10);
    const first = await reapply([], policyEnv(h)).done;
    expect(first.code).toBe(0);
    expect(await clearEmails(db)).toBe(0);

    // A worker not restarted runs again under the old policy: clear emails once more.
    const ds = h.sim.datasetOf('default');
    for (let i = 0; i < 5; i += 1) ds.touch('candidates', i);
    await h.sync([{ account: 'default', resource: 'candidates' }], 'full');
    expect(await clearEmails(db)).toBeGreaterThan(5);

    // And starts another run, in progress while reapply-policy starts.
    const run = await runInProgress(h);
    const beside = await reapply(['--wait', '1s'], policyEnv(h)).done;
    expect(beside.code).toBe(1);
    expect(beside.stdout).toContain(
      `default/candidates: a run of candidates of account default is writing (sync_runs run ${run.id}, full, started`,
    );
    expect(beside.stdout).toContain('waiting up to 1s for it to end');
    expect(beside.stderr).toContain(`sync_runs run ${run.id}`);
    expect(beside.stderr).toContain('nothing of candidates was rewritten');
    expect(beside.stdout).not.toContain(': already applied');
    await run.writeClear();
    await run.end();

    // Once it has ended: what the runs stored since the completed pass is rewritten, not "already applied".
    const later = await reapply([], policyEnv(h)).done;
    expect(later.stdout).toMatch(
      /default\/candidates\/candidates_data: \d+ rows written since the last pass by a run under another policy, rewritten\n/,
    );
    expect(later.stdout).toMatch(
      /default\/candidates\/candidates_history: \d+ rows written since the last pass by a run under another policy, rewritten\n/,
    );
    expect(later.stderr).toContain('restart every worker with this policy');
    expect(later.code).toBe(1);
    expect(await clearEmails(db)).toBe(0);

    // Nothing written since: already applied; --again passes over every row once more.
    const rerun = await reapply([], policyEnv(h)).done;
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toContain('default/candidates/candidates_data: already applied');
    const again = await reapply(['--again'], policyEnv(h)).done;
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      /default\/candidates\/candidates_data: \d+ rows read, 0 rewritten\n/,
    );
    expect(again.stdout).not.toContain(': already applied');
  });

  it('waits for a run writing the resource, saying which, and rewrites what it stored once it ends', async () => {
    const h = await startHarness();
    const db = h.database.db;
    await h.sync([{ account: 'default', resource: 'candidates' }], 'full');
    const run = await runInProgress(h);
    const started = reapply(['--wait', '5m'], policyEnv(h));
    await waitFor(async () => started.io.out().includes('waiting up to 5m for it to end'));
    // Not a row rewritten while the run writes: its last page stores a clear email, then it ends.
    expect(await clearEmails(db)).toBeGreaterThan(10);
    await run.writeClear();
    await run.end();
    const result = await started.done;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`sync_runs run ${run.id}, full, started`);
    expect(await clearEmails(db)).toBe(0);
  });
});
