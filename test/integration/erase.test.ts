// hiresync erase --resource R --id N: every trace of the records (row,
// history, rejected records) goes in one transaction, each id is logged in
// hiresync.erasures without content, nothing else moves (other ids, the
// same ids of other accounts in the shared tables), and later runs store a
// record afresh only if the API still serves it.
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { ResourceLock } from '../../src/warehouse/runs/resource-lock.js';
import type { Database } from '../../src/warehouse/tables.js';
import { secretOf, targetsOf } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { defer, harness, accounts } = cleanupAfterEach();

/** Rows of `table` (a shared table, by its account view's name) of `account` with `id`. */
async function rowsOf(
  db: Kysely<Database>,
  table: string,
  account: string,
  id: number | string,
): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from ${sql.table(`hiresync.data_${table}`)}
    where account = ${account} and id = ${String(id)}::bigint`.execute(db);
  return rows[0]?.n ?? 0;
}

/**
 * The rejected records of `resource` of `account` carrying `id`, read here
 * from `raw` on their own terms (an object's `id`, number or string; the id
 * in the text of a record kept as a JSON string).
 */
async function rejectedOf(
  db: Kysely<Database>,
  account: string,
  resource: string,
  id: number | string,
): Promise<number> {
  const { rows } = await sql<{ raw: unknown }>`
    select raw from hiresync.data_rejected_records
    where account = ${account} and resource = ${resource}`.execute(db);
  return rows.filter(({ raw }) => {
    if (typeof raw === 'string') return new RegExp(`"id"\\s*:\\s*${id}\\b`).test(raw);
    return (
      raw !== null && typeof raw === 'object' && String((raw as { id?: unknown }).id) === String(id)
    );
  }).length;
}

/** What of record `id` an account holds: its row, its versions, its rejected records. */
async function tracesOf(db: Kysely<Database>, account: string, resource: string, id: number) {
  return {
    rows: await rowsOf(db, resource, account, id),
    versions: await rowsOf(db, `${resource}_history`, account, id),
    rejected: await rejectedOf(db, account, resource, id),
  };
}

async function erase(args: string[], env: Record<string, string>) {
  const io = captureIo();
  const code = await main(['erase', ...args], env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

async function erasures(db: Kysely<Database>) {
  const { rows } = await sql<{
    account: string;
    resource: string;
    record_id: string;
    rows_erased: number;
    history_versions_erased: number;
    rejected_records_erased: number;
    origin: string;
    note: string | null;
    xmin: string;
  }>`select account, resource, record_id::text, rows_erased, history_versions_erased,
      rejected_records_erased, origin, note, xmin::text from hiresync.erasures order by id`.execute(
    db,
  );
  return rows;
}

describe('hiresync erase --id', () => {
  it('removes the row, every history version and the rejected records of the ids in one transaction, logs each id without content, and leaves other ids and the same ids of another account alone', async () => {
    // default and acme are served the same data: the same ids live side by side in the shared tables.
    const data = {
      counts: { jobs: 40, job_posts: 0, tracking_links: 0 },
      malformedEvery: 10,
      nulEvery: 10,
    };
    const h = await accounts({
      accounts: ['acme'],
      simulator: {
        dataset: data,
        accounts: [
          {
            name: 'acme',
            clientId: 'acme-client',
            clientSecrets: [secretOf('acme')],
            dataset: data,
          },
        ],
      },
    });
    const db = h.database.db;
    const both = targetsOf(['default', 'acme'], ['jobs']);
    await h.sync(both, 'full');
    const ds = h.sim.datasetOf('default');
    const changed = ds.touch('jobs', 3); // a second version in default's history
    await h.sync(targetsOf(['default'], ['jobs']), 'full');
    const nul = ds.idOf('jobs', 8); // carries a \u0000: rejected, kept as JSON text
    const stringId = ds.idOf('jobs', 9); // malformed: its id a string, rejected
    const untouched = ds.idOf('jobs', 5);
    const never = 999_999_999;
    expect(ds.idOf('jobs', 3)).toBe(changed);
    expect(h.sim.datasetOf('acme').idOf('jobs', 3)).toBe(changed);
    // A rejected record of the changed job in each account (a page once refused its update).
    for (const account of ['default', 'acme']) {
      await sql`insert into hiresync.data_rejected_records (account, resource, run_id, page, raw, record_key, reason)
        select ${account}, 'jobs', max(id), 1, ${JSON.stringify({ id: changed, title: 'refused' })}::jsonb,
          'test', 'test' from hiresync.data_sync_runs where account = ${account}`.execute(db);
    }
    expect(await tracesOf(db, 'default', 'jobs', changed)).toEqual({
      rows: 1,
      versions: 2,
      rejected: 1,
    });
    expect(await tracesOf(db, 'default', 'jobs', nul)).toEqual({
      rows: 0,
      versions: 0,
      rejected: 2,
    });
    expect(await tracesOf(db, 'default', 'jobs', stringId)).toEqual({
      rows: 0,
      versions: 0,
      rejected: 2,
    });
    const acmeBefore = await Promise.all(
      [changed, nul, stringId, untouched].map((id) => tracesOf(db, 'acme', 'jobs', id)),
    );
    const untouchedBefore = await tracesOf(db, 'default', 'jobs', untouched);

    const result = await erase(
      [
        '--resource',
        'jobs',
        '--id',
        String(changed),
        '--id',
        `${nul},${stringId}`,
        '--id',
        String(never),
        '--note',
        'ticket 42',
      ],
      h.env,
    );

    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'erased 4 records of jobs, account default, in one transaction, each logged in hiresync.erasures:',
    );
    const expected = new Map<number, string>([
      [changed, 'row yes, 2 history versions, 1 rejected record'],
      [nul, 'row no, 0 history versions, 2 rejected records'],
      [stringId, 'row no, 0 history versions, 2 rejected records'],
      [
        never,
        'row no, 0 history versions, 0 rejected records: nothing of it was stored; the request is logged',
      ],
    ]);
    expect(lines.slice(1)).toEqual(
      [...expected.keys()]
        .sort((a, b) => a - b)
        .map((id) =>
          expect.stringMatching(new RegExp(`^  id ${id}: ${expected.get(id)} \\(erasure \\d+\\)$`)),
        ),
    );

    // Every trace of the four ids is gone from default.
    for (const id of [changed, nul, stringId, never]) {
      expect(await tracesOf(db, 'default', 'jobs', id), String(id)).toEqual({
        rows: 0,
        versions: 0,
        rejected: 0,
      });
    }
    // The proof an auditor runs: the log has the id, the history view has nothing of it.
    const { rows: proof } = await sql<{ logged: number; versions: number }>`
      select (select count(*)::int from hiresync.erasures
              where account = 'default' and resource = 'jobs' and record_id = ${changed}) as logged,
             (select count(*)::int from public.jobs_history where id = ${changed}) as versions`.execute(
      db,
    );
    expect(proof).toEqual([{ logged: 1, versions: 0 }]);
    // Another id of default, and acme's records of the same ids, are as they were.
    expect(await tracesOf(db, 'default', 'jobs', untouched)).toEqual(untouchedBefore);
    expect(untouchedBefore).toEqual({ rows: 1, versions: 1, rejected: 0 });
    expect(
      await Promise.all(
        [changed, nul, stringId, untouched].map((id) => tracesOf(db, 'acme', 'jobs', id)),
      ),
    ).toEqual(acmeBefore);
    expect(acmeBefore[0]).toEqual({ rows: 1, versions: 1, rejected: 1 });

    // One row per id, all written by one transaction (one xmin), holding no content.
    const log = await erasures(db);
    expect(log.map(({ xmin: _, ...row }) => row)).toEqual(
      [changed, nul, stringId, never]
        .sort((a, b) => a - b)
        .map((id) => ({
          account: 'default',
          resource: 'jobs',
          record_id: String(id),
          rows_erased: id === changed ? 1 : 0,
          history_versions_erased: id === changed ? 2 : 0,
          rejected_records_erased: id === changed ? 1 : id === never ? 0 : 2,
          origin: 'command',
          note: 'ticket 42',
        })),
    );
    expect(new Set(log.map((row) => row.xmin)).size).toBe(1);
    const { rows: columns } = await sql<{ column_name: string }>`
      select column_name from information_schema.columns
      where table_schema = 'hiresync' and table_name = 'erasures' order by ordinal_position`.execute(
      db,
    );
    expect(columns.map((c) => c.column_name)).toEqual([
      'id',
      'account',
      'resource',
      'record_id',
      'erased_at',
      'rows_erased',
      'history_versions_erased',
      'rejected_records_erased',
      'origin',
      'note',
    ]);
  });

  it('a later run stores a record afresh only if the API still serves it: the incremental run that reads it again, a full run, never one deleted upstream', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { jobs: 120, job_posts: 0, tracking_links: 0 } } },
      env: { HIRESYNC_PER_PAGE: '50' },
    });
    const db = h.database.db;
    const ds = h.sim.dataset;
    await h.sync(['jobs'], 'full');
    const newest = ds.idOf('jobs', 119); // on the first page of every incremental run
    const older = ds.idOf('jobs', 10); // read again by full runs only
    const gone = ds.remove('jobs', 20);
    await h.sync(['jobs'], 'full');
    expect(await tracesOf(db, 'default', 'jobs', gone)).toEqual({
      rows: 1,
      versions: 2,
      rejected: 0,
    });

    const erased = await erase(['--resource', 'jobs', '--id', `${newest},${older},${gone}`], h.env);
    expect(erased.code).toBe(0);
    for (const id of [newest, older, gone]) {
      expect(await tracesOf(db, 'default', 'jobs', id)).toEqual({
        rows: 0,
        versions: 0,
        rejected: 0,
      });
    }

    // An incremental run: its first page holds the newest job, unchanged upstream, and the
    // comparison that leaves unchanged records alone finds no row of it: stored as new.
    const [incremental] = await h.sync(['jobs']);
    // One page read: the run stops at the page that reaches the last run's highest id.
    expect(incremental).toMatchObject({
      ok: true,
      summary: { mode: 'incremental', pages: 1, records: 1 },
    });
    const versionsOf = async (id: number) => {
      const { rows } = await sql<{ valid_to: string | null; deleted: boolean; fresh: boolean }>`
        select valid_to, deleted,
          valid_from > (select max(erased_at) from hiresync.erasures) as fresh
        from public.jobs_history where id = ${id}`.execute(db);
      return rows;
    };
    expect(await versionsOf(newest)).toEqual([{ valid_to: null, deleted: false, fresh: true }]);
    expect(await h.liveIds('jobs')).toContain(String(newest));
    expect(await tracesOf(db, 'default', 'jobs', older)).toEqual({
      rows: 0,
      versions: 0,
      rejected: 0,
    });

    // A full run reads every record the API serves: the older one comes back, the one
    // deleted upstream does not.
    await h.sync(['jobs'], 'full');
    expect(await versionsOf(older)).toEqual([{ valid_to: null, deleted: false, fresh: true }]);
    expect(await tracesOf(db, 'default', 'jobs', gone)).toEqual({
      rows: 0,
      versions: 0,
      rejected: 0,
    });
    expect(await h.liveIds('jobs')).toEqual(h.expectedIds('jobs'));
  });

  it('erases a list resource stored as sent (its NAME_data and NAME_history), gone from its views', async () => {
    const h = await harness({
      simulator: {
        dataset: { counts: { jobs: 0, job_posts: 0, tracking_links: 0, candidates: 30 } },
      },
      env: { HIRESYNC_RESOURCES: 'jobs,candidates' },
    });
    const db = h.database.db;
    await h.sync(['candidates'], 'full');
    const id = h.sim.dataset.idOf('candidates', 4);
    expect(await rowsOf(db, 'candidates_data', 'default', id)).toBe(1);
    expect(await rowsOf(db, 'candidates_history', 'default', id)).toBe(1);
    const result = await erase(['--resource', 'candidates', '--id', String(id)], h.env);
    expect(result.stdout).toMatch(
      new RegExp(
        `^  id ${id}: row yes, 1 history version, 0 rejected records \\(erasure \\d+\\)$`,
        'm',
      ),
    );
    expect(await rowsOf(db, 'candidates_data', 'default', id)).toBe(0);
    expect(await rowsOf(db, 'candidates_history', 'default', id)).toBe(0);
    for (const view of ['candidates', 'candidates_flat']) {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from ${sql.id('public', view)} where id = ${id}`.execute(db);
      expect(rows[0]?.n, view).toBe(0);
    }
  });

  it("erases a referrer's row and versions, not the tracking links that credit it; a link still served with it nested brings it back at its next run", async () => {
    const h = await harness({
      simulator: { dataset: { counts: { jobs: 5, job_posts: 5, tracking_links: 60 } } },
    });
    const db = h.database.db;
    await h.sync(['tracking_links'], 'full');
    const { rows: credited } = await sql<{ id: string; links: number }>`
      select credited_to_id::text as id, count(*)::int as links from public.tracking_links
      where credited_to_id is not null group by 1 order by 2 desc, 1 limit 1`.execute(db);
    const referrer = Number(credited[0]?.id);
    const links = credited[0]?.links ?? 0;
    expect(links).toBeGreaterThan(0);
    expect(await rowsOf(db, 'referrers', 'default', referrer)).toBe(1);
    expect(await rowsOf(db, 'referrers_history', 'default', referrer)).toBe(1);

    const result = await erase(['--resource', 'referrers', '--id', String(referrer)], h.env);
    expect(result.stdout).toMatch(
      new RegExp(
        `^  id ${referrer}: row yes, 1 history version, 0 rejected records \\(erasure \\d+\\)$`,
        'm',
      ),
    );
    expect(await rowsOf(db, 'referrers', 'default', referrer)).toBe(0);
    expect(await rowsOf(db, 'referrers_history', 'default', referrer)).toBe(0);
    // The links that credit the referrer stay, without its name.
    const { rows: flat } = await sql<{ links: number; named: number }>`
      select count(*)::int as links, count(credited_to_name)::int as named
      from public.tracking_links_flat where credited_to_id = ${referrer}`.execute(db);
    expect(flat).toEqual([{ links, named: 0 }]);

    // The links are still served with the referrer nested in them: stored afresh from them.
    await h.sync(['tracking_links'], 'full');
    expect(await rowsOf(db, 'referrers', 'default', referrer)).toBe(1);
    expect(await rowsOf(db, 'referrers_history', 'default', referrer)).toBe(1);
  });

  it('waits for a run that holds the resource, and erases once it ends; past --wait it erases nothing and exits 1', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { jobs: 20, job_posts: 0, tracking_links: 0 } } },
    });
    const db = h.database.db;
    await h.sync(['jobs'], 'full');
    const id = h.sim.dataset.idOf('jobs', 2);
    // The Postgres lock a run of default's jobs holds from its start to its end.
    const run = await new ResourceLock(db).tryAcquire('jobs');
    expect(run).toBeDefined();
    defer(() => run?.release());

    const refused = await erase(['--resource', 'jobs', '--id', String(id), '--wait', '1s'], h.env);
    expect(refused).toMatchObject({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(
        /^hiresync erase: a run of jobs holds its resource \(a sync in progress\) for longer than the erasure waits \(1 s\): nothing was erased; run it again when the run has ended/,
      ),
    });
    expect(await tracesOf(db, 'default', 'jobs', id)).toEqual({
      rows: 1,
      versions: 1,
      rejected: 0,
    });
    expect(await erasures(db)).toEqual([]);

    // Asked again while the run goes on: it waits on the lock, erasing nothing meanwhile.
    const waiting = erase(['--resource', 'jobs', '--id', String(id), '--wait', '1m'], h.env);
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where l.locktype = 'advisory' and not l.granted and a.application_name = 'hiresync erase'`.execute(
        db,
      );
      return (rows[0]?.n ?? 0) > 0;
    });
    expect(await rowsOf(db, 'jobs', 'default', id)).toBe(1);
    await run?.release();
    expect((await waiting).code).toBe(0);
    expect(await tracesOf(db, 'default', 'jobs', id)).toEqual({
      rows: 0,
      versions: 0,
      rejected: 0,
    });
  });

  it('exits 2 for an account or a resource the database holds nothing of, erasing nothing', async () => {
    const h = await harness({
      simulator: { dataset: { counts: { jobs: 5, job_posts: 0, tracking_links: 0 } } },
    });
    expect(await erase(['--account', 'nobody', '--resource', 'jobs', '--id', '1'], h.env)).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "hiresync: account nobody has no data in this database (not registered, or removed with --drop-data; see 'hiresync accounts list'): nothing was erased\n",
    });
    const unknown = await erase(['--resource', 'candidates', '--id', '1'], h.env);
    expect(unknown).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('account default has no resource candidates'),
    });
    expect(await erasures(h.database.db)).toEqual([]);
  });
});
