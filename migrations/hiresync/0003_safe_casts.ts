import { type Kysely, sql } from 'kysely';

// Casts that never raise, for the typed views (jobs_flat, …). Frozen in time:
// takes Kysely<any>, never imports app types, names its functions with their
// schema.
//
// A typed view is built from the values seen when it was built; a record
// synced afterwards may hold a value that does not parse as the column's type
// (a decimal where all were integers, "soon" in an _at key). Selecting through
// these functions gives null for such a value instead of failing the query,
// and the next full run's refresh widens the column (to numeric, or text).
// PostgreSQL 15 has no pg_input_is_valid, hence the exception blocks.

const FUNCTIONS: Array<{ name: string; returns: string; body: string; comment: string }> = [
  {
    name: 'try_bigint',
    returns: 'bigint',
    body: `select case when jsonb_typeof(v) = 'number' and (v::numeric) = trunc(v::numeric)
        and (v::numeric) between -9223372036854775808 and 9223372036854775807
      then (v::numeric)::bigint end`,
    comment: 'A JSON number that is a whole bigint, else null. Never raises.',
  },
  {
    name: 'try_numeric',
    returns: 'numeric',
    body: `select case when jsonb_typeof(v) = 'number' then v::numeric end`,
    comment: 'A JSON number as numeric (exactly as sent), else null. Never raises.',
  },
  {
    name: 'try_boolean',
    returns: 'boolean',
    body: `select case when jsonb_typeof(v) = 'boolean' then v::boolean end`,
    comment: 'A JSON boolean, else null. Never raises.',
  },
];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never see app types (Kysely's guidance)
export async function up(db: Kysely<any>): Promise<void> {
  for (const f of FUNCTIONS) {
    await sql`create or replace function ${sql.id('hiresync', f.name)}(v jsonb)
      returns ${sql.raw(f.returns)} language sql immutable parallel safe
      as ${sql.lit(f.body)}`.execute(db);
    await sql`comment on function ${sql.id('hiresync', f.name)}(jsonb) is ${sql.lit(f.comment)}`.execute(
      db,
    );
  }
  // Text input of timestamps and dates depends on TimeZone and DateStyle:
  // stable, not immutable; an exception block makes them parallel unsafe (the
  // default). The pattern spares the exception block (a subtransaction) for
  // values that are plainly not timestamps.
  await sql`create or replace function hiresync.try_timestamptz(v jsonb)
    returns timestamptz language plpgsql stable as $$
    begin
      if jsonb_typeof(v) <> 'string' or v #>> '{}' !~ '^\\d{4}-\\d{2}-\\d{2}' then
        return null;
      end if;
      return (v #>> '{}')::timestamptz;
    exception when others then
      return null;
    end $$`.execute(db);
  await sql`comment on function hiresync.try_timestamptz(jsonb) is ${sql.lit(
    'A JSON string holding an ISO 8601 timestamp, as timestamptz at the precision sent, else null. Never raises.',
  )}`.execute(db);
  await sql`create or replace function hiresync.try_date(v jsonb)
    returns date language plpgsql stable as $$
    begin
      if jsonb_typeof(v) <> 'string' or v #>> '{}' !~ '^\\d{4}-\\d{2}-\\d{2}$' then
        return null;
      end if;
      return (v #>> '{}')::date;
    exception when others then
      return null;
    end $$`.execute(db);
  await sql`comment on function hiresync.try_date(jsonb) is ${sql.lit(
    'A JSON string holding a date (YYYY-MM-DD), as date, else null. Never raises.',
  )}`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as for up
export async function down(db: Kysely<any>): Promise<void> {
  for (const name of ['try_bigint', 'try_numeric', 'try_boolean', 'try_timestamptz', 'try_date']) {
    await sql`drop function if exists ${sql.id('hiresync', name)}(jsonb)`.execute(db);
  }
}
