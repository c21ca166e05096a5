import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT, schemaOf } from '../account-name.js';
import { HiresyncError } from '../errors.js';
import { ident } from './account-views.js';
import type { Database } from './schema.js';

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

/**
 * The schema of an account's analytics views, when a release makes them:
 * `analytics` for default, `NAME_analytics` for an account NAME.
 */
export function analyticsSchemaOf(account: string): string {
  return account === DEFAULT_ACCOUNT ? 'analytics' : `${account}_analytics`;
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
  /** The schemas granted (or revoked): the account's, then its analytics schema when it exists. */
  schemas: string[];
}

/**
 * Gives `role` read-only access to `account` (with `revoke`, takes it back):
 * `usage` on the account's schema and on its analytics schema when there is
 * one, `select` on every relation in them, and the same on the relations
 * hiresync makes there later (default privileges of hiresync's role: a new
 * list resource's views, a typed view made again). Nothing else: never a
 * shared table, never `all_accounts`. The boundary itself is the views' (see
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
    const { rows } = await sql<{ role: boolean; schema: boolean; analytics: boolean }>`
      select exists (select 1 from pg_roles where rolname = ${role}) as role,
        to_regnamespace(${ident(schemaOf(account))}) is not null as schema,
        to_regnamespace(${ident(analyticsSchemaOf(account))}) is not null as analytics`.execute(
      trx,
    );
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
    const schemas = [schemaOf(account), ...(found.analytics ? [analyticsSchemaOf(account)] : [])];
    const r = ident(role);
    const statements = schemas.flatMap((schema) => {
      const s = ident(schema);
      return revoke
        ? [
            `alter default privileges in schema ${s} revoke select on tables from ${r}`,
            `revoke select on all tables in schema ${s} from ${r}`,
            `revoke usage on schema ${s} from ${r}`,
          ]
        : [
            `grant usage on schema ${s} to ${r}`,
            `grant select on all tables in schema ${s} to ${r}`,
            `alter default privileges in schema ${s} grant select on tables to ${r}`,
          ];
    });
    await sql.raw(`${statements.join(';\n')};`).execute(trx);
    return { schemas };
  });
}
