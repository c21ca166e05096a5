import { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { writeTwoAtATime } from '../../bench/write-two-at-a-time.js';
import { schemaOf } from '../../src/account-name.js';
import { RedisCheckpointStore } from '../../src/queue/redis-checkpoint-store.js';
import { BUILT_IN_RESOURCES } from '../../src/resources/index.js';
import { trackingLinks } from '../../src/resources/tracking-links.js';
import type { Page } from '../../src/sync/ports.js';
import { writePageAfter } from '../../src/warehouse/pages/pipelined-page.js';
import { accountReferenceLocksText } from '../../src/warehouse/pages/sql/reference-locks.js';
import { type PageToWrite, validatePage, writePage } from '../../src/warehouse/pages/write-page.js';
import { ResourceLock } from '../../src/warehouse/runs/resource-lock.js';
import { KyselyRunStore } from '../../src/warehouse/runs/run-store.js';
import { createRun } from '../../src/warehouse/runs/sync-runs.js';
import type { Database } from '../../src/warehouse/tables.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';
import type { SyncHarness } from '../support/sync-harness.js';
import { useEmptyWarehouse } from '../support/warehouse-fixture.js';

const { harness, cli, defer } = cleanupAfterEach();
const w = useEmptyWarehouse();

/** A tracking link carrying job board `board` (named `name`), updated at second `second`. */
function link(id: number, board: number, name: string, second: number) {
  return {
    id,
    token: `t${id}-${name}`,
    job_board: { id: board, company_name: name, url_token: `u${board}` },
    credited_to: { id: 500 + (id % 2), name: `referrer ${name}`, employee_id: null },
    source: { id: 700, public_name: `source ${name}` },
    created_at: '2026-01-01T00:00:00Z',
    updated_at: `2026-01-01T00:00:${String(second).padStart(2, '0')}Z`,
  };
}

/**
 * Four pages of a run. Page 2's ids are disjoint from page 1's (written
 * beside it); page 3 lists link 21 again, changed (written after page 2's
 * commit); page 4 is disjoint again. Every page carries copies of job board 9,
 * each newer than the last, and of referrers 500/501 and source 700.
 */
const PAGES = [
  [link(10, 9, 'a', 1), link(11, 8, 'a', 2), link(12, 9, 'b', 3)],
  [link(20, 9, 'c', 4), link(21, 9, 'd', 5), link(22, 8, 'e', 6)],
  [link(21, 9, 'f', 7), link(30, 9, 'g', 8)],
  [link(40, 9, 'h', 9), link(41, 8, 'i', 10)],
];

function pageOf(account: string, runId: string, number: number): PageToWrite {
  const records = PAGES[number - 1] as unknown[];
  return {
    account,
    resource: trackingLinks,
    runId,
    pageNumber: number,
    body: JSON.stringify(records),
    records,
  };
}

/** Writes the pages as a pipelined walk does: each started before the one before it commits, two at most. */
async function writePipelined(db: Kysely<Database>, account: string, runId: string) {
  await writeTwoAtATime(
    db,
    PAGES.map((_, i) => pageOf(account, runId, i + 1)),
  );
}

/** A version: its id, record, and whether it is open. */
interface Version {
  id: string;
  raw: unknown;
  open: boolean;
}

/** What an analyst reads of an account: its links, nested rows and every version, without times. */
async function contents(db: Kysely<Database>, account: string) {
  const { rows: links } = await sql<{ id: string; token: string }>`
    select id, token, job_board_id, credited_to_id, source_id, raw, deleted_at is null as live
    from hiresync.data_tracking_links where account = ${account} order by id`.execute(db);
  const nested = [];
  for (const table of ['job_boards', 'referrers', 'sources']) {
    const { rows } = await sql`select id, raw from ${sql.raw(`hiresync.data_${table}`)}
      where account = ${account} order by id`.execute(db);
    const { rows: versions } = await sql<Version>`
      select id, raw, valid_to is null as open from ${sql.raw(`hiresync.data_${table}_history`)}
      where account = ${account} order by id, valid_from`.execute(db);
    nested.push({ table, rows, versions });
  }
  const { rows: versions } = await sql<Version>`
    select id, raw, valid_to is null as open from hiresync.data_tracking_links_history
    where account = ${account} order by id, valid_from`.execute(db);
  const { rows: runs } = await sql`select pages, records from hiresync.data_sync_runs
    where account = ${account}`.execute(db);
  return { links, nested, versions, runs };
}

describe('pages written beside each other', () => {
  it('leave the rows, nested rows, versions and counts that writing them one by one leaves', async () => {
    const one = await createRun(w.db, 'default', { resource: 'tracking_links', mode: 'full' });
    for (let number = 1; number <= PAGES.length; number += 1) {
      await writePage(w.db, pageOf('default', one, number));
    }
    const pipelined = await createRun(w.db, 'other', { resource: 'tracking_links', mode: 'full' });
    await writePipelined(w.db, 'other', pipelined);

    const alone = await contents(w.db, 'default');
    const beside = await contents(w.db, 'other');
    expect(beside).toEqual(alone);
    // The newest copy won: link 21 as page 3 sent it, job board 9 as the last link carrying it.
    const link21 = beside.links.find((l) => String(l.id) === '21') as { token: string };
    expect(link21.token).toBe('t21-f');
    const boards = beside.nested[0] as {
      rows: Array<{ id: string; raw: { company_name: string } }>;
    };
    expect(boards.rows.find((r) => String(r.id) === '9')?.raw.company_name).toBe('h');
    // One open version per id, link 21's two versions chained.
    const open = beside.versions.filter((v) => v.open).map((v) => String(v.id));
    expect(open).toEqual([...new Set(open)]);
    expect(beside.versions.filter((v) => String(v.id) === '21')).toHaveLength(2);
    expect(beside.runs).toEqual([{ pages: 4, records: '10' }]);
  });

  it('give their rows up and wait when the page before them waits on a writer that waits on them, rather than wait forever', async () => {
    // Link 20 is stored: page 2's statement takes its row lock.
    const setup = await createRun(w.db, 'default', { resource: 'tracking_links', mode: 'full' });
    await writePage(w.db, { ...pageOf('default', setup, 2), pageNumber: 1 });
    const runId = await createRun(w.db, 'default', { resource: 'tracking_links', mode: 'full' });
    // Another writer holds the job boards' lock (as a job_boards page would) ...
    const other = new pg.Client({ connectionString: w.url });
    await other.connect();
    defer(() => other.end());
    await other.query('begin');
    await other.query(accountReferenceLocksText(['job_boards']), [schemaOf('default')]);
    // ... so page 1 waits for it; page 2 writes link 20 beside page 1, then waits for page 1.
    const page1 = pageOf('default', runId, 1);
    const verdict1 = validatePage(trackingLinks, page1.records);
    const first = writePage(w.db, page1, verdict1);
    const page2 = pageOf('default', runId, 2);
    const second = writePageAfter(
      w.db,
      page2,
      validatePage(trackingLinks, page2.records),
      { committed: first, verdict: verdict1 },
      500,
    );
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state = 'idle in transaction'
          and query like '-- The links of a page%'`.execute(w.db);
      return (rows[0]?.n ?? 0) > 0;
    }, 10_000);
    // The other writer now waits on link 20, which page 2 holds: a cycle no database sees.
    const blocked = other.query(
      `update hiresync.data_tracking_links set token = token where account = 'default' and id = 20`,
    );
    await blocked;
    await other.query('commit');
    await Promise.all([first, second]);
    const stored = await contents(w.db, 'default');
    expect(stored.links.map((l) => String(l.id))).toEqual(['10', '11', '12', '20', '21', '22']);
    const open = stored.versions.filter((v) => v.open).map((v) => String(v.id));
    expect(open).toEqual(['10', '11', '12', '20', '21', '22']);
  });
});

/** The resource's checkpoint in Redis. */
async function checkpointOf(h: SyncHarness) {
  const redis = new Redis(h.env.REDIS_URL as string);
  try {
    return await new RedisCheckpointStore(redis, h.config.redisPrefix).load('tracking_links');
  } finally {
    redis.disconnect();
  }
}

describe('a pipelined run killed between two pages’ commits', () => {
  it('resumes from the checkpoint of the last page committed in order, with every link once, no version doubled and its counts exact', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { tracking_links: 50 } } },
      env: { HIRESYNC_PER_PAGE: '5', HIRESYNC_RUN_LOCK_TTL: '1s' },
    });
    const [first] = await h.sync(['tracking_links'], 'full');
    expect(first?.ok).toBe(true);
    const versionsBefore = await sql<{ n: string }>`
      select count(*)::text as n from hiresync.data_tracking_links_history
      where account = 'default'`.execute(h.database.db);
    // A row of page 4 held by another session: page 4's write waits on it
    // while page 3 commits and is checkpointed.
    const held = String(h.sim.dataset.idOf('tracking_links', 50 - 3 * 5 - 3));
    const other = new pg.Client({ connectionString: h.database.url });
    await other.connect();
    defer(() => other.end());
    await other.query('begin');
    await other.query(
      `select 1 from hiresync.data_tracking_links where account = 'default' and id = $1 for update`,
      [held],
    );
    const { child, exit } = cli(['sync', '--resource', 'tracking_links', '--full'], h.env);
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'
          and query like '-- %of tracking links%'`.execute(h.database.db);
      return (rows[0]?.n ?? 0) > 0 && (await checkpointOf(h))?.pagesDone === 3;
    }, 30_000);
    child.kill('SIGKILL');
    await exit;
    await other.query('rollback');
    const checkpoint = await checkpointOf(h);
    expect(checkpoint?.pagesDone).toBe(3);
    const killed = await h.database.db
      .selectFrom('hiresync.data_sync_runs')
      .select(['pages', 'records'])
      .where('id', '=', checkpoint?.runId ?? '')
      .executeTakeFirstOrThrow();
    // Pages 1 to 3 committed, page 4 (and any page beside it) did not.
    expect(killed).toEqual({ pages: 3, records: '15' });

    const [resumed] = await h.sync(['tracking_links']);
    expect(resumed).toMatchObject({
      ok: true,
      summary: { runId: checkpoint?.runId, resumed: true, pages: 10, records: 50, deleted: 0 },
    });
    expect(await h.liveIds('tracking_links')).toEqual(h.expectedIds('tracking_links'));
    const versions = await sql<{ n: string; open: string; ids: string }>`
      select count(*)::text as n, count(*) filter (where valid_to is null)::text as open,
        count(distinct id)::text as ids
      from hiresync.data_tracking_links_history where account = 'default'`.execute(h.database.db);
    // Nothing changed at the API: the re-written pages added no version.
    expect(versions.rows[0]).toEqual({ n: versionsBefore.rows[0]?.n, open: '50', ids: '50' });
  });
});

describe('a page committed beside its run’s session', () => {
  it('is waited for by whoever takes the run lock next, should the session die while it commits', async () => {
    const lock = new ResourceLock(w.db, { heartbeatMs: 60_000 });
    const held = await lock.tryAcquire('tracking_links');
    if (!held) throw new Error('the run lock was not taken');
    defer(() => held.release());
    const pid = await sessionPid(held.session);
    const base = new KyselyRunStore(w.db, { resources: BUILT_IN_RESOURCES, resourceLock: lock });
    const store = base.over(held.session);
    const runId = await createRun(w.db, 'default', { resource: 'tracking_links', mode: 'full' });
    const page = (number: number, ids: number[]): Page => {
      const records = ids.map((id) => link(id, 9, `p${number}`, number));
      return { number, url: `u${number}`, records, body: JSON.stringify(records), nextUrl: 'n' };
    };
    const [p1, p2] = [page(1, [1, 2]), page(2, [3, 4])];
    const prepared1 = store.preparePage('tracking_links', p1);
    let turn!: () => void;
    const committed = new Promise<void>((resolve) => {
      turn = resolve;
    });
    const first = store.writePage('tracking_links', runId, p1, prepared1);
    // Page 2 goes beside page 1, on a pooled connection.
    const second = store.writePage('tracking_links', runId, p2, undefined, {
      earlier: { committed, prepared: prepared1 },
    });
    const ended = second.then(
      () => 'committed',
      (e: Error) => `failed: ${e.message}`,
    );
    await first;
    // Another writer of the account's job boards holds their lock: page 2,
    // its turn come and its run's lock checked, waits on it.
    const blocker = new pg.Client({ connectionString: w.url });
    await blocker.connect();
    defer(() => blocker.end());
    await blocker.query('begin');
    await blocker.query(accountReferenceLocksText(['job_boards']), [schemaOf('default')]);
    turn();
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'
          and wait_event = 'advisory'`.execute(w.db);
      return (rows[0]?.n ?? 0) > 0;
    }, 10_000);
    // The run's session dies, its lock with it; another worker takes the lock as every worker does.
    const { rows: killed } = await sql<{ ok: boolean }>`
      select pg_terminate_backend(${pid}::int) as ok`.execute(w.db);
    expect(killed).toEqual([{ ok: true }]);
    // Terminated is not yet gone: the lock is free once its backend has exited.
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where pid = ${pid}::int`.execute(w.db);
      return rows[0]?.n === 0;
    }, 10_000);
    // What the taker sees of page 2 once it holds the lock.
    let atTakeover: number | undefined;
    const taking = new ResourceLock(w.db, { heartbeatMs: 60_000 })
      .tryAcquire('tracking_links')
      .then(async (taken) => {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n
          from hiresync.data_tracking_links where account = 'default' and id in (3, 4)`.execute(
          w.db,
        );
        atTakeover = rows[0]?.n;
        return taken;
      });
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The taker waits for the page still being committed under the old lock.
    expect(atTakeover).toBeUndefined();
    await blocker.query('commit');
    const taken = await taking;
    defer(() => taken?.release());
    expect(taken).toBeDefined();
    // Page 2 had committed before anyone else held the run.
    expect(atTakeover).toBe(2);
    // What page 2 committed, it committed before anyone else held the run.
    expect(await ended).toBe('committed');
  });
});

/** The backend pid of a session. */
async function sessionPid(session: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(session);
  return rows[0]?.pid ?? 0;
}
