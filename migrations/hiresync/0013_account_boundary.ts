import { type Kysely, sql } from 'kysely';

// An account's schema is an isolation boundary (docs/shared-storage.md, "An
// account's schema is a boundary"). Frozen in time: takes Kysely<any>, never
// imports app types, names its relations with their schema.
//
// The views of shared storage (0009) were plain views: `select … from
// hiresync.data_<table> where account = '<name>'`. The planner merges a plain
// view's filter into the reader's query, and may run a cheap function of the
// reader's WHERE (any role can make one in pg_temp) on every row of the
// shared partition before the account filter: a role granted one account's
// schema read other accounts' rows. Every view in a schema of hiresync's
// (hiresync.schema_layouts) that reads a shared table becomes a
// security_barrier view: its filter runs first. Views built on those views
// (tracking_links_flat, the typed views, analysts' own) need nothing: a
// qualifier pushed into them stops at the barrier. New views are made so by
// hiresync (account-views.ts).
//
// The all_accounts views read every account's rows: they are granted to
// nobody, and what PUBLIC was given on them (no release of hiresync granted
// anything; a deployment may have by hand) is taken back. A named role's
// grant stays: the operator gave it on purpose.

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ view: string }>`
    select distinct format('%I.%I', vn.nspname, v.relname) as view
    from hiresync.schema_layouts l
    join pg_namespace vn on vn.nspname = l.schema
    join pg_class v on v.relnamespace = vn.oid and v.relkind = 'v'
    join pg_rewrite r on r.ev_class = v.oid
    join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = r.oid
      and d.refclassid = 'pg_class'::regclass
    join pg_class t on t.oid = d.refobjid
    join pg_namespace tn on tn.oid = t.relnamespace
    where tn.nspname = 'hiresync' and t.relname like 'data\\_%'
      and not coalesce('security_barrier=true' = any(v.reloptions), false)
    order by 1`.execute(db);
  // In batches: one round trip per 500 views, whatever the number of accounts.
  for (let i = 0; i < rows.length; i += 500) {
    const batch = rows.slice(i, i + 500);
    await sql
      .raw(batch.map(({ view }) => `alter view ${view} set (security_barrier = true)`).join(';\n'))
      .execute(db);
  }
  const { rows: union } = await sql<{ present: boolean }>`
    select to_regnamespace('all_accounts') is not null as present`.execute(db);
  if (union[0]?.present) {
    await sql`revoke all on schema all_accounts from public`.execute(db);
    await sql`revoke all on all tables in schema all_accounts from public`.execute(db);
  }
}
