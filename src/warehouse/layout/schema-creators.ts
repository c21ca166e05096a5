import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT, schemaOf } from '../../account-name.js';
import { HiresyncError } from '../../errors.js';
import { PUBLIC_SCHEMA } from '../database.js';
import type { Database } from '../tables.js';
import { hiresyncAnalyticsSchemas } from './account-schema-owner.js';
import { ident } from './account-views.js';
import { registeredAccounts } from './all-accounts-members.js';
import { ALL_ACCOUNTS_SCHEMA, CONTROL_SCHEMA } from './migrate.js';

/** A role other than hiresync's that may create objects in a schema hiresync writes. */
export interface ForeignCreator {
  schema: string;
  /** The role's name, or `public` (every role). */
  role: string;
}

/**
 * The roles that may create objects in `schemas`, hiresync's own user and
 * superusers left out: the grantees of CREATE on each schema (PUBLIC
 * included) and its owner (pg_database_owner standing for the database's
 * owner). A role that inherits CREATE through a group is named by that group.
 */
export async function foreignCreators(
  db: Kysely<Database>,
  schemas: readonly string[],
): Promise<ForeignCreator[]> {
  if (schemas.length === 0) return [];
  const { rows } = await sql<ForeignCreator>`
    with acl as (
      select n.nspname as schema, a.grantee
      from pg_namespace n
      cross join lateral aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
      where n.nspname = any(${[...schemas]}::text[]) and a.privilege_type = 'CREATE'
    ), resolved as (
      select schema, grantee,
        case when grantee = (select oid from pg_roles where rolname = 'pg_database_owner')
          then (select datdba from pg_database where datname = current_database())
          else grantee end as effective
      from acl
    )
    select distinct x.schema, case when x.grantee = 0 then 'public' else r.rolname::text end as role
    from resolved x left join pg_roles r on r.oid = x.grantee
    left join pg_roles e on e.oid = x.effective
    where x.grantee = 0 or (e.rolname <> current_user and not e.rolsuper)
    order by 1, 2`.execute(db);
  return rows;
}

/** `name` as the line to run writes it: quoted only when it must be. */
function sqlName(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : ident(name);
}

/** The statement that takes CREATE on `schema` back from `role`. */
function revokeLine(schema: string, role: string): string {
  return `revoke create on schema ${sqlName(schema)} from ${sqlName(role)};`;
}

function describeRole(role: string): string {
  return role === 'public' ? 'PUBLIC (every role)' : `role ${role}`;
}

/**
 * Refuses (throws) when another role may create objects in schema
 * `hiresync`: it could make a shared table `data_<resource>` (or anything
 * else hiresync names there) before hiresync does, and hiresync would write
 * every account's rows into it. docs/operating.md, "Roles".
 */
export async function refuseForeignCreatorsOfControl(db: Kysely<Database>): Promise<void> {
  const found = await foreignCreators(db, [CONTROL_SCHEMA]);
  if (found.length === 0) return;
  throw new HiresyncError(
    `${found.map((f) => describeRole(f.role)).join(', ')} can create objects in schema ${CONTROL_SCHEMA}, where hiresync keeps every account's rows: such a role could make a table there (a data_<resource> shared table, say) that hiresync would then write into. hiresync refuses to run until it is revoked: ${found.map((f) => revokeLine(f.schema, f.role)).join(' ')}`,
  );
}

/**
 * One warning per schema hiresync writes besides its own (`public`,
 * `all_accounts`, every registered account's, and the analytics schemas
 * hiresync made) where another role may
 * create objects: such a role can put objects in front of the account's
 * analysts and in hiresync's way. docs/operating.md, "Roles".
 */
export async function foreignCreatorWarnings(
  db: Kysely<Database>,
  accounts?: readonly string[],
): Promise<Array<{ schema: string; roles: string[]; message: string }>> {
  const names = accounts ?? (await registeredAccounts(db));
  // The analytics schemas hiresync made too: a role creating there can put a
  // function before the analysts' (an overload of pipeline_as_of).
  const found = await foreignCreators(db, [
    PUBLIC_SCHEMA,
    ALL_ACCOUNTS_SCHEMA,
    ...names.map(schemaOf),
    ...(await hiresyncAnalyticsSchemas(db, [...new Set([DEFAULT_ACCOUNT, ...names])])),
  ]);
  const bySchema = new Map<string, string[]>();
  for (const { schema, role } of found)
    bySchema.set(schema, [...(bySchema.get(schema) ?? []), role]);
  return [...bySchema].map(([schema, roles]) => ({
    schema,
    roles,
    message: `${roles.map(describeRole).join(', ')} can create objects in schema ${schema}, which hiresync writes: such a role can put objects of its own in front of the readers of the schema and in hiresync's way. Revoke it unless you mean it: ${roles.map((role) => revokeLine(schema, role)).join(' ')}`,
  }));
}
