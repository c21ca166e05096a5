import { type Kysely, sql } from 'kysely';
import { accountOfSchema } from '../../account-name.js';
import type { Database } from '../tables.js';
import { hiresyncAnalyticsSchema } from './account-schema-owner.js';
import { ALL_ACCOUNTS_SCHEMA } from './migrate.js';

/** Options of {@link dependentsOutside}. */
export interface DependentsOutsideOptions {
  /**
   * Views of schema `all_accounts` to leave out, and what is built on them:
   * hiresync's own (see allAccountsViewNames), which it rebuilds without the
   * schema before it drops it. Any other object of `all_accounts` (an
   * analyst's view) is counted as in any other schema. Default none (once
   * they are rebuilt, any that still depends on the schema is counted).
   */
  skipAllAccounts?: readonly string[];
}

/**
 * What `drop schema <schema> cascade` (with the account's analytics schema
 * when hiresync made it, which goes with it) would drop outside them: the objects
 * of other schemas that depend on one of its objects, directly or through
 * each other (an analyst's view selecting from `<schema>.jobs` and the views
 * built on that one, a foreign key referencing one of its tables, a column
 * default or trigger using one of its sequences or functions, ...), read from
 * pg_depend. Each is named as `<type> <identity>`
 * (`view reporting.acme_jobs`, `table constraint notes_job_id_fkey on
 * reporting.notes`), sorted; none when nothing outside depends on it.
 */
export async function dependentsOutside(
  db: Kysely<Database>,
  schema: string,
  { skipAllAccounts = [] }: DependentsOutsideOptions = {},
): Promise<string[]> {
  // A view's dependencies are its rewrite rule's: the rule stands for its view.
  // The account's analytics schema goes with its schema when hiresync made it
  // (drop-account-schema.ts); one of the name that is someone else's stays, so
  // its objects on the account's schema are outside.
  const analytics = await hiresyncAnalyticsSchema(db, accountOfSchema(schema));
  const schemas = [schema, ...(analytics === undefined ? [] : [analytics])];
  const { rows } = await sql<{ object: string }>`
    with recursive dropped(classid, objid) as (
      select 'pg_namespace'::regclass::oid, n.oid from pg_namespace n where n.nspname = any(${schemas}::text[])
      union
      select 'pg_class'::regclass::oid, c.oid
      from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = any(${schemas}::text[])
      union
      select 'pg_type'::regclass::oid, t.oid
      from pg_type t join pg_namespace n on n.oid = t.typnamespace where n.nspname = any(${schemas}::text[])
      union
      select 'pg_proc'::regclass::oid, p.oid
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = any(${schemas}::text[])
      union
      select m.classid, m.objid
      from pg_depend d
      join dropped x on d.refclassid = x.classid and d.refobjid = x.objid
      cross join lateral (
        select case when d.classid = 'pg_rewrite'::regclass then 'pg_class'::regclass::oid else d.classid end,
               case when d.classid = 'pg_rewrite'::regclass
                    then (select r.ev_class from pg_rewrite r where r.oid = d.objid)
                    else d.objid end
      ) m(classid, objid)
      where d.deptype in ('n', 'a')
        and not (m.classid = 'pg_class'::regclass and exists (
          select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where c.oid = m.objid and n.nspname = ${ALL_ACCOUNTS_SCHEMA}
            and c.relname = any(${[...skipAllAccounts]}::text[])))
    )
    select distinct o.type || ' ' || o.identity as object
    from dropped x
    cross join lateral pg_identify_object(x.classid, x.objid, 0) o
    where coalesce(
            -- Objects of a table, whose own schema pg_identify_object leaves empty.
            case x.classid
              when 'pg_trigger'::regclass then (
                select n.nspname from pg_trigger t join pg_class c on c.oid = t.tgrelid
                join pg_namespace n on n.oid = c.relnamespace where t.oid = x.objid)
              when 'pg_attrdef'::regclass then (
                select n.nspname from pg_attrdef a join pg_class c on c.oid = a.adrelid
                join pg_namespace n on n.oid = c.relnamespace where a.oid = x.objid)
              when 'pg_policy'::regclass then (
                select n.nspname from pg_policy p join pg_class c on c.oid = p.polrelid
                join pg_namespace n on n.oid = c.relnamespace where p.oid = x.objid)
              when 'pg_namespace'::regclass then (
                select n.nspname from pg_namespace n where n.oid = x.objid)
              -- Default privileges in the schema (those accounts grant
              -- leaves): of the schema, gone with it, never outside.
              when 'pg_default_acl'::regclass then (
                select n.nspname from pg_default_acl a join pg_namespace n on n.oid = a.defaclnamespace
                where a.oid = x.objid)
            end,
            o.schema, '') <> all(${schemas}::text[])
    order by object`.execute(db);
  return rows.map((r) => r.object);
}

/** What a schema holds, for the question `accounts remove --drop-data` asks. */
export interface SchemaContents {
  /**
   * Its tables, but hiresync's migration bookkeeping: its views of shared
   * storage (each the account's rows of a table hiresync.data_<name>), and
   * any table of its own.
   */
  tables: number;
  /** Their rows, counted. */
  rows: number;
}

/** Counts the tables of `schema` (see {@link SchemaContents}) and their rows. */
export async function schemaContents(
  db: Kysely<Database>,
  schema: string,
): Promise<SchemaContents> {
  const { rows: tables } = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and not c.relispartition
      and c.relname not in ('kysely_migration', 'kysely_migration_lock')
      and (c.relkind in ('r', 'p')
        or (c.relkind = 'v' and to_regclass('hiresync.' || quote_ident('data_' || c.relname)) is not null))
    order by c.relname`.execute(db);
  let rows = 0;
  for (const { name } of tables) {
    const { rows: count } = await sql<{ n: string }>`
      select count(*) as n from ${sql.id(schema, name)}`.execute(db);
    rows += Number(count[0]?.n ?? 0);
  }
  return { tables: tables.length, rows };
}
