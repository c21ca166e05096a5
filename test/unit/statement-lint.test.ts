import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lintStatement } from '../support/statement-lint.js';

const before = (file: string) =>
  readFileSync(new URL(`./statement-lint/${file}`, import.meta.url), 'utf8');

const rules = async (sql: string) => (await lintStatement(sql)).map((p) => p.slice(0, 2));

describe('the statement lint', () => {
  it("fails the page statements of the release before: relations named without schema, written through the account's view", async () => {
    for (const [file, history] of <Array<[string, string]>>[
      ['before-json-records-page.sql', 'jobs_history'],
      ['before-tracking-links-page.sql', 'tracking_links_history'],
    ]) {
      expect(await lintStatement(before(file))).toContain(
        `R2: relation ${history} is not schema-qualified`,
      );
    }
    // Its Kysely statements too: the run's row, found by id alone, in the view.
    expect(await rules(`update "sync_runs" set "pages" = $1 where "id" = $2`)).toEqual(['R2']);
    expect(
      await rules(
        `select pg_try_advisory_lock($1::bigint) as ok, set_config('search_path', '"acme"', false)`,
      ),
    ).toContain('R2');
  });

  it('fails a statement that reads or writes a shared table without the account bound', async () => {
    for (const sql of [
      'select * from hiresync.data_jobs where id = $1',
      "select * from hiresync.data_jobs t where t.account = 'acme' and t.id = $1",
      'select * from hiresync.data_jobs t where t.account = $1 or t.id = $2',
      'select * from hiresync.data_jobs t where t.account <> $1',
      'insert into hiresync.data_jobs (id, data) values ($1, $2)',
      "insert into hiresync.data_jobs (account, id, data) select 'acme', 1, '{}'::jsonb",
      'insert into hiresync.data_jobs (account, id, data) select t.account, t.id, t.data from hiresync.data_jobs t where t.account = $1',
      'select * from hiresync.data_jobs j join hiresync.data_jobs_history h on h.id = j.id where j.account = $1',
      'select * from hiresync.data_jobs j where j.account = $1 and exists (select 1 from hiresync.data_sources s where s.id = j.id)',
      'with gone as (update hiresync.data_jobs set deleted_at = now() where id = $1 returning id) select count(*) from gone',
      'delete from hiresync.data_jobs where id = any($1)',
      'update hiresync.data_jobs t set data = s.data from hiresync.data_job_posts s where t.account = $1 and s.id = t.id',
    ]) {
      expect(await rules(sql), sql).toContain('R1');
    }
  });

  it('passes a shared table bound by a parameter, a list of accounts, or a join on account to one bound', async () => {
    for (const sql of [
      'select t.id from hiresync.data_jobs t where t.account = $1 and t.id = $2',
      'select id from hiresync.data_jobs where account = $1',
      'select id from hiresync.data_jobs where account = any($1::text[])',
      'select * from hiresync.data_jobs j join hiresync.data_jobs_history h on h.account = j.account and h.id = j.id where j.account = $1::text',
      'insert into hiresync.data_jobs (account, id, data) values ($1, $2, $3) on conflict (account, id) do nothing',
      'insert into hiresync.data_jobs as t (account, id, data) select $1::text, (r ->> $2)::bigint, r from pg_catalog.jsonb_array_elements($3::jsonb) as e(r)',
      'delete from hiresync.data_jobs where account = $1 and id = any($2)',
      "create view acme.jobs as select id, data from hiresync.data_jobs where account = 'acme'",
    ]) {
      expect(await lintStatement(sql), sql).toEqual([]);
    }
  });

  it('passes a correlated read bound to the accounts a parameter lists; fails one bound to rows of no parameter', async () => {
    const probe = (from: string) => `select f.* from ${from}
      cross join lateral (select * from hiresync.data_sync_runs s where s.account = a.account limit 1) f`;
    expect(await rules(probe('unnest($1::text[]) a(account)'))).toEqual([]);
    expect(await rules(probe("(select 'acme' as account) a"))).toEqual(['R1']);
    expect(await rules(probe("unnest(array['acme']) a(account)"))).toEqual(['R1']);
  });

  it('fails an unqualified relation (a CTE aside) and any mention of search_path', async () => {
    expect(await rules('with kept as (select 1 as id) select id from kept')).toEqual([]);
    expect(await rules('select id from jobs')).toEqual(['R2']);
    expect(await rules('select 1 from pg_class')).toEqual(['R2']);
    expect(await rules('set search_path to acme')).toContain('R2');
    expect(await rules("select set_config('search_path', '', true)")).toContain('R2');
  });

  it('fails an unqualified call of a function the allowlist does not name; a qualified one passes', async () => {
    expect(await rules('select unnest($1::bigint[]), cardinality($2::int[])')).toEqual([]);
    expect(await rules('select safe_bigint($1)')).toEqual(['R3']);
    expect(await rules('select leak($1), count(*)')).toEqual(['R3']);
    expect(await rules("select set_config('search_path', $1, true)")).toContain('R2');
    expect(await rules('select hiresync.safe_bigint($1), public.unnest($2::bigint[])')).toEqual([]);
  });
});
