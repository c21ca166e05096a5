/**
 * Benchmark: what the account boundary (security barrier views, issue 30)
 * costs an analyst's queries, against the plain views of the release before.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node dist/bench/account-boundary-cost.js [accounts] [rows]
 *
 * One fresh database, migrated as a deployment is: `accounts` accounts
 * (default 1,000) with 100 tracking links, 100 jobs and 20 job boards each,
 * written with SQL into the shared tables, and the account `acme` with `rows`
 * (default 20,000) links and jobs, whose schema holds its views (made by
 * migrate's own code). A role granted only schema `acme` runs each query; the
 * views of `acme` are switched between plain and security barrier in turn,
 * on the same data, rounds interleaved (plain, barrier, plain, …), and each
 * query's median over every run of each kind is printed.
 */
import type pg from 'pg';
import { createDatabase } from '../src/warehouse/database.js';
import { migrateSchema } from '../src/warehouse/setup/migrate-all.js';
import { freshDatabase, postgresClient } from './support.js';

const ROUNDS = 6;
const RUNS = 7;

/** The analyst's queries, run as a role granted only schema acme (the cross-account one as the owner). */
const QUERIES: ReadonlyArray<{ name: string; text: string; asOwner?: boolean }> = [
  {
    name: "one account's tracking_links_flat: count(*)",
    text: 'select count(*) from acme.tracking_links_flat',
  },
  {
    name: "one account's jobs, a condition on data: data ->> 'status' = 'open'",
    text: "select count(*) from acme.jobs where data ->> 'status' = 'open'",
  },
  {
    name: "one account's jobs by id (the primary key)",
    text: 'select * from acme.jobs where id = 10777',
  },
  {
    name: "one account's tracking links of one job, joined to their boards",
    text: `select l.id, b.company_name from acme.tracking_links l
      join acme.job_boards b on b.id = l.job_board_id where l.job_id = 4242`,
  },
  {
    name: 'links per job board company across accounts (all_accounts, not barriers)',
    text: `select b.company_name, count(*) as links
      from all_accounts.tracking_links_flat l
      join all_accounts.job_boards b on b.account = l.account and b.id = l.job_board_id
      group by b.company_name order by links desc limit 20`,
    asOwner: true,
  },
];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function seed(client: pg.Client, accounts: number, rows: number): Promise<void> {
  await client.query(`
    insert into hiresync.data_job_boards (account, id, company_name, url_token, raw)
    select a, b, 'Board ' || b, 'board' || b, jsonb_build_object('id', b)
    from (select 'a' || lpad(n::text, 5, '0') as a from generate_series(1, ${accounts}) n
          union all select 'acme') accts, generate_series(1, 20) b`);
  for (const [table, perAccount, acme] of [
    ['tracking_links', 100, rows],
    ['jobs', 100, rows],
  ] as const) {
    const values =
      table === 'jobs'
        ? `jsonb_build_object('id', i, 'name', 'Job ' || i, 'status', case when i % 3 = 0 then 'open' else 'closed' end)`
        : '';
    const columns =
      table === 'jobs' ? '(account, id, data)' : '(account, id, token, job_id, job_board_id, raw)';
    const select =
      table === 'jobs'
        ? `a, i, ${values}`
        : `a, i, 'tok' || i, i % 5000, 1 + i % 20, jsonb_build_object('id', i)`;
    await client.query(`
      insert into hiresync.data_${table} ${columns}
      select ${select} from (
        select 'a' || lpad(n::text, 5, '0') as a, i
        from generate_series(1, ${accounts}) n, generate_series(1, ${perAccount}) i
        union all select 'acme', i from generate_series(1, ${acme}) i) s`);
  }
  await client.query('analyze');
}

async function setBarrier(client: pg.Client, on: boolean): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `select format('%I.%I', n.nspname, c.relname) as name
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     join pg_depend d on d.objid = (select oid from pg_rewrite where ev_class = c.oid)
     join pg_class t on t.oid = d.refobjid
     join pg_namespace tn on tn.oid = t.relnamespace
     where n.nspname = 'acme' and c.relkind = 'v' and tn.nspname = 'hiresync' and t.relname like 'data\\_%'
     group by 1`,
  );
  for (const { name } of rows) {
    await client.query(`alter view ${name} set (security_barrier = ${on})`);
  }
}

async function main(): Promise<void> {
  const accounts = Number(process.argv[2] ?? 1000);
  const rows = Number(process.argv[3] ?? 20_000);
  const database = await freshDatabase('boundary');
  const db = createDatabase(database.url);
  const owner = postgresClient(database.url);
  const analyst = postgresClient(database.url);
  try {
    await migrateSchema(db, 'acme');
    await owner.connect();
    await seed(owner, accounts, rows);
    const role = `bench_analyst_${process.pid}`;
    await owner.query(`create role ${role} nologin`);
    await owner.query(
      `grant usage on schema acme to ${role}; grant select on all tables in schema acme to ${role}`,
    );
    await analyst.connect();
    await analyst.query(`set role ${role}`);
    const times = new Map<string, { plain: number[]; barrier: number[] }>();
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const kind of ['plain', 'barrier'] as const) {
        await setBarrier(owner, kind === 'barrier');
        for (const query of QUERIES) {
          const client = query.asOwner ? owner : analyst;
          await client.query(query.text); // warm
          for (let i = 0; i < RUNS; i += 1) {
            const started = performance.now();
            await client.query(query.text);
            const entry = times.get(query.name) ?? { plain: [], barrier: [] };
            entry[kind].push(performance.now() - started);
            times.set(query.name, entry);
          }
        }
      }
    }
    await owner.query(`drop owned by ${role}; drop role ${role}`);
    process.stdout.write(
      `account boundary: ${accounts.toLocaleString('en-US')} accounts of 100 links and jobs, acme with ${rows.toLocaleString('en-US')}; ${ROUNDS} interleaved rounds x ${RUNS} runs, medians\n`,
    );
    process.stdout.write(
      '| query | plain views | security barrier views | ratio |\n|---|---|---|---|\n',
    );
    for (const [name, t] of times) {
      const plain = median(t.plain);
      const barrier = median(t.barrier);
      process.stdout.write(
        `| ${name} | ${plain.toFixed(2)} ms | ${barrier.toFixed(2)} ms | ${(barrier / plain).toFixed(2)} |\n`,
      );
    }
  } finally {
    await analyst.end().catch(() => undefined);
    await owner.end().catch(() => undefined);
    await db.destroy();
    await database.drop();
  }
}

await main();
