import { type Kysely, sql } from 'kysely';

// Frozen in time: takes Kysely<any>, never imports app types, names its
// objects with their schema.
//
// 1. The column names of the typed views' keys, decided once per view for
//    every account: a key that must be changed into an identifier (`Name`,
//    `first-name`, `account`) gets `stem__N`, numbered here, so that every
//    account and every refresh give it the same column and all_accounts.*_flat
//    never puts two keys in one column. A plain lower-case key is its own
//    column and is not listed.
// 2. The typed views whose rebuild an object of someone else's blocks
//    (status, the metric hiresync_typed_view_blocked).
// 3. hiresync.try_timestamptz_utc: a timestamp whose text carries no UTC
//    offset reads as UTC, whatever the reader's TimeZone and DateStyle.

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table hiresync.typed_column_names (
    view text not null,
    key text not null,
    column_name text not null,
    assigned_at timestamptz not null default now(),
    primary key (view, key),
    unique (view, column_name)
  )`.execute(db);
  await sql`comment on table hiresync.typed_column_names is ${sql.lit(
    "The column of each record key that is not a plain lower-case identifier, per typed view (jobs_flat, …), the same in every account: stem__N, numbered in order of first sight. A plain key's column is the key itself; no plain key has the form stem__N, so the two never meet.",
  )}`.execute(db);
  await sql`create table hiresync.typed_view_blocks (
    schema text not null,
    view text not null,
    message text,
    blocking text[] not null default '{}',
    blocked_since timestamptz,
    resolved_at timestamptz,
    primary key (schema, view)
  )`.execute(db);
  await sql`comment on table hiresync.typed_view_blocks is ${sql.lit(
    'Typed views (schema.view; schema all_accounts for the unions) whose columns could not take a wider type because objects of others depend on them. message says which columns, which objects and what resolves it; null once the view was rebuilt.',
  )}`.execute(db);
  // A function's own settings apply while it runs: the text is read in UTC
  // and as ISO (year first), whatever the session says.
  await sql`create or replace function hiresync.try_timestamptz_utc(v jsonb)
    returns timestamptz language plpgsql stable
    set timezone = 'UTC' set datestyle = 'ISO, YMD'
    as $$
    begin
      if jsonb_typeof(v) <> 'string' or v #>> '{}' !~ '^\\d{4}-\\d{2}-\\d{2}' then
        return null;
      end if;
      return (v #>> '{}')::timestamptz;
    exception when others then
      return null;
    end $$`.execute(db);
  await sql`comment on function hiresync.try_timestamptz_utc(jsonb) is ${sql.lit(
    'A JSON string holding an ISO 8601 timestamp (year first), as timestamptz at the precision sent, else null; without a UTC offset (or a date alone) it is read as UTC, whatever the session TimeZone and DateStyle. Never raises.',
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists hiresync.try_timestamptz_utc(jsonb)`.execute(db);
  await sql`drop table if exists hiresync.typed_view_blocks, hiresync.typed_column_names`.execute(
    db,
  );
}
