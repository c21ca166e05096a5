import { type Kysely, sql } from 'kysely';

// Frozen in time: takes Kysely<any>, never imports app types, names its
// objects with their schema.
//
// The timestamp casts of the typed views read the same instant for every
// reader, whatever the session's TimeZone, DateStyle and
// timezone_abbreviations: a function's own settings apply while it runs.
// `create or replace` keeps each function's identity, so every view built on
// it (hiresync.try_timestamptz: views built before try_timestamptz_utc) reads
// offset-less text as UTC, and an abbreviation (`EST`) from the Default set,
// from the moment this migration commits, without a rebuild. And
// hiresync.typed_view_blocks now also records refreshes that could not finish.

const BODY = `
    begin
      if jsonb_typeof(v) <> 'string' or v #>> '{}' !~ '^\\d{4}-\\d{2}-\\d{2}' then
        return null;
      end if;
      return (v #>> '{}')::timestamptz;
    exception when others then
      return null;
    end`;

const COMMENT =
  "A JSON string holding an ISO 8601 timestamp (year first), as timestamptz at the precision sent, else null; without a UTC offset (or a date alone) it is read as UTC, and a zone abbreviation as the Default set names it, whatever the session's TimeZone, DateStyle and timezone_abbreviations. Never raises.";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  for (const name of ['try_timestamptz', 'try_timestamptz_utc']) {
    await sql`create or replace function ${sql.id('hiresync', name)}(v jsonb)
      returns timestamptz language plpgsql stable
      set timezone = 'UTC' set datestyle = 'ISO, YMD' set timezone_abbreviations = 'Default'
      as ${sql.lit(BODY)}`.execute(db);
    await sql`comment on function ${sql.id('hiresync', name)}(jsonb) is ${sql.lit(COMMENT)}`.execute(
      db,
    );
  }
  await sql`comment on table hiresync.typed_view_blocks is ${sql.lit(
    'Typed views (schema.view; schema all_accounts for the unions) that show null where the records hold values: a column kept at a type that cannot hold them, or showing no key, because objects of others depend on the view; or a refresh that could not finish (a lock held too long, a deadlock). message says which columns or what cause, which objects and what resolves it; null once a refresh succeeded.',
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter function hiresync.try_timestamptz(jsonb) reset all`.execute(db);
  await sql`alter function hiresync.try_timestamptz_utc(jsonb) reset timezone_abbreviations`.execute(
    db,
  );
}
