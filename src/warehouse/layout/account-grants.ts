import { type Kysely, sql } from 'kysely';
import { schemaOf } from '../../account-name.js';
import { HiresyncError } from '../../errors.js';
import { PUBLIC_SCHEMA } from '../database.js';
import type { Database } from '../tables.js';
import { hiresyncAnalyticsSchema } from './account-schema-owner.js';
import { ident } from './account-views.js';

/**
 * What a role given to `hiresync accounts grant` must look like: an unquoted
 * Postgres identifier (lowercase), so the `create role` line hiresync prints
 * is one to run as it is.
 */
const ROLE_NAME = /^[a-z_][a-z0-9_$]{0,62}$/;

/** Why `role` cannot be granted an account, or undefined when it can. */
export function grantRoleProblem(role: string): string | undefined {
  if (!ROLE_NAME.test(role)) {
    return `role name ${JSON.stringify(role)} must be 1 to 63 lowercase letters, digits, _ or $, starting with a letter or _`;
  }
  if (role === 'public') {
    return "role public is every role: granting it an account would open the account to all; name a role of the account's analysts (create role NAME nologin)";
  }
  if (role.startsWith('pg_')) {
    return `role ${role} is one of Postgres's predefined roles (pg_*): name a role of the account's analysts`;
  }
  return undefined;
}

/** Whether `account` is registered (hiresync.accounts); false before the control schema exists. */
export async function isRegistered(db: Kysely<Database>, account: string): Promise<boolean> {
  const { rows } = await sql<{ registered: boolean }>`
    select to_regclass('hiresync.accounts') is not null
      and exists (select 1 from hiresync.accounts where name = ${account}) as registered`.execute(
    db,
  );
  return rows[0]?.registered === true;
}

/** The role named does not exist: the message gives the line that makes it. */
export class MissingRoleError extends HiresyncError {}

/** What {@link grantAccount} changed. */
export interface AccountGrant {
  /** The schemas granted (or revoked): the account's, then its analytics schema when hiresync made it. */
  schemas: string[];
}

/**
 * Gives `role` read-only access to `account` (with `revoke`, takes it back):
 * `usage` on the account's schema and on its analytics schema when hiresync
 * made one (see hiresyncAnalyticsSchema), `select` on every relation in them, and the same on the relations
 * hiresync makes there later (default privileges of hiresync's role: a new
 * list resource's views, a typed view made again). In `public` (default's
 * schema, and the database's), only the relations built on hiresync's shared
 * tables: a table of the DBA's there stays as it was, granted or not, and
 * `--revoke` leaves `usage` on public alone. Nothing else: never a shared
 * table, never `all_accounts`. The boundary itself is the views' (see
 * ACCOUNT_BOUNDARY in account-views.ts). Idempotent, in one transaction.
 * Throws {@link MissingRoleError} when `role` does not exist.
 */
export async function grantAccount(
  db: Kysely<Database>,
  account: string,
  role: string,
  { revoke = false }: { revoke?: boolean } = {},
): Promise<AccountGrant> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ role: boolean; schema: boolean }>`
      select exists (select 1 from pg_roles where rolname = ${role}) as role,
        to_regnamespace(${ident(schemaOf(account))}) is not null as schema`.execute(trx);
    const found = rows[0];
    if (!found?.role) {
      throw new MissingRoleError(
        `role ${role} does not exist: make it first, then run this again: create role ${role} nologin; (a group role its members inherit from; for a person who logs in: create role ${role} login password '…';)`,
      );
    }
    if (!found.schema) {
      throw new HiresyncError(
        `schema ${schemaOf(account)} of account ${account} is not made yet: run 'hiresync migrate' first`,
      );
    }
    // Its analytics schema only when hiresync made it: one of the name that
    // is someone else's holds nothing of the account's to give or take back.
    const analytics = await hiresyncAnalyticsSchema(trx, account);
    const schemas = [schemaOf(account), ...(analytics === undefined ? [] : [analytics])];
    const r = ident(role);
    const statements: string[] = [];
    for (const schema of schemas) {
      const s = ident(schema);
      // public is the database's, not only default's: only the relations
      // built on hiresync's shared tables there, never a table of the DBA's.
      const relations =
        schema === PUBLIC_SCHEMA
          ? (await hiresyncRelationsIn(trx, schema)).join(', ')
          : `all tables in schema ${s}`;
      // The analytics schema's functions (pipeline_as_of) answer for the
      // account alone, as its views do: callable by whoever may read them.
      const functions = schema === analytics;
      statements.push(
        ...(revoke
          ? [
              `alter default privileges in schema ${s} revoke select on tables from ${r}`,
              ...(relations === '' ? [] : [`revoke select on ${relations} from ${r}`]),
              ...(functions
                ? [
                    `alter default privileges in schema ${s} revoke execute on functions from ${r}`,
                    `revoke execute on all functions in schema ${s} from ${r}`,
                  ]
                : []),
              ...(schema === PUBLIC_SCHEMA ? [] : [`revoke usage on schema ${s} from ${r}`]),
            ]
          : [
              `grant usage on schema ${s} to ${r}`,
              ...(relations === '' ? [] : [`grant select on ${relations} to ${r}`]),
              `alter default privileges in schema ${s} grant select on tables to ${r}`,
              ...(functions
                ? [
                    `grant execute on all functions in schema ${s} to ${r}`,
                    `alter default privileges in schema ${s} grant execute on functions to ${r}`,
                  ]
                : []),
            ]),
      );
    }
    await sql.raw(`${statements.join(';\n')};`).execute(trx);
    return { schemas };
  });
}

/**
 * The relations of `schema` built, directly or through other views, on
 * hiresync's shared tables (`hiresync.data_*`): the account's views, its
 * typed views, `tracking_links_flat` and views made on them. Quoted, with
 * their schema.
 */
async function hiresyncRelationsIn(db: Kysely<Database>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    with recursive deps (oid) as (
      select r.ev_class from pg_catalog.pg_depend d
      join pg_catalog.pg_rewrite r on r.oid = d.objid
      join pg_catalog.pg_class t on t.oid = d.refobjid
      join pg_catalog.pg_namespace tn on tn.oid = t.relnamespace
      where d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
        and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
        and tn.nspname = 'hiresync' and pg_catalog.starts_with(t.relname, 'data_')
      union
      select r.ev_class from deps
      join pg_catalog.pg_depend d on d.refobjid = deps.oid
        and d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
        and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
      join pg_catalog.pg_rewrite r on r.oid = d.objid and r.ev_class <> deps.oid
    )
    select pg_catalog.format('%I.%I', n.nspname, c.relname) as name
    from deps join pg_catalog.pg_class c on c.oid = deps.oid
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema}
    order by 1`.execute(db);
  return rows.map((row) => row.name);
}
