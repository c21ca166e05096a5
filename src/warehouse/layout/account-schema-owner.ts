import { type Kysely, sql } from 'kysely';
import { accountNameProblem, analyticsSchemaOf } from '../../account-name.js';
import { HiresyncError } from '../../errors.js';
import type { Database } from '../tables.js';
import { migrationNames } from './migrate.js';

/**
 * The comment that marks a schema as an account schema of hiresync's own: set
 * on the schemas hiresync creates for accounts, and read by {@link schemaOwner}.
 */
export function accountSchemaComment(schema: string): string {
  return `hiresync account schema: the tables of account ${schema}, built by hiresync's migrations. hiresync owns this schema ('hiresync accounts remove ${schema} --drop-data' drops it).`;
}

/**
 * The first words of the comment that marks an account's analytics schema
 * (NAME_analytics) as hiresync's: set when hiresync makes it, read before it
 * builds there or drops it.
 */
export function analyticsSchemaMark(account: string): string {
  return `hiresync analytics schema of account ${account}:`;
}

/**
 * `account`'s analytics schema (see analyticsSchemaOf) when hiresync made it
 * (its comment starts with {@link analyticsSchemaMark}), else undefined. A
 * schema of that name hiresync did not make (a DBA's `analytics`, a
 * `NAME_analytics` made for an account's reports before hiresync had one, the
 * schema of an account registered as NAME_analytics before such names were
 * reserved) is someone else's, as migrate judges it: never granted with the
 * account, counted with it or dropped with it.
 */
export async function hiresyncAnalyticsSchema(
  db: Kysely<Database>,
  account: string,
): Promise<string | undefined> {
  return (await hiresyncAnalyticsSchemas(db, [account]))[0];
}

/** The analytics schemas of `accounts` that hiresync made (see {@link hiresyncAnalyticsSchema}), in one query. */
export async function hiresyncAnalyticsSchemas(
  db: Kysely<Database>,
  accounts: readonly string[],
): Promise<string[]> {
  if (accounts.length === 0) return [];
  const { rows } = await sql<{ schema: string }>`
    select w.schema from unnest(${accounts.map(analyticsSchemaOf)}::text[], ${accounts.map(analyticsSchemaMark)}::text[]) as w(schema, mark)
    join pg_namespace n on n.nspname = w.schema
    where starts_with(obj_description(n.oid, 'pg_namespace'), w.mark)
    order by w.schema`.execute(db);
  return rows.map((r) => r.schema);
}

/**
 * Creates `schema` when it does not exist and marks it as an account schema
 * of hiresync's ({@link accountSchemaComment}), both in one transaction: no
 * schema of hiresync's is ever seen unmarked. A schema that exists already is
 * taken only when {@link schemaOwner} finds it hiresync's (one hiresync built
 * before it marked its schemas gets the mark now); any other, even an empty
 * one, is refused with a {@link ForeignSchemaError}, marking nothing.
 */
export async function claimAccountSchema(db: Kysely<Database>, schema: string): Promise<void> {
  const problem = accountNameProblem(schema);
  if (problem) throw new Error(`refusing to claim schema ${JSON.stringify(schema)}: ${problem}`);
  const mark = sql`comment on schema ${sql.id(schema)} is ${sql.lit(accountSchemaComment(schema))}`;
  try {
    await db.transaction().execute(async (trx) => {
      await sql`create schema ${sql.id(schema)}`.execute(trx);
      await mark.execute(trx);
    });
    return;
  } catch (error) {
    // Another's, or made by a concurrent claim: judged below.
    const code = (error as { code?: string }).code;
    if (code !== DUPLICATE_SCHEMA && code !== UNIQUE_VIOLATION) throw error;
  }
  if ((await schemaOwner(db, schema)) !== 'hiresync') throw new ForeignSchemaError(schema);
  const { rows } = await sql<{ comment: string | null }>`
    select obj_description(oid, 'pg_namespace') as comment
    from pg_namespace where nspname = ${schema}`.execute(db);
  if (rows[0]?.comment != null) return;
  try {
    await mark.execute(db);
  } catch (error) {
    // Its migrations, once applied, still tell it as hiresync's.
    if ((error as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw error;
  }
}

const DUPLICATE_SCHEMA = '42P06';
const UNIQUE_VIOLATION = '23505';

/**
 * A schema of an account's name exists and hiresync did not create it: it
 * carries neither hiresync's mark nor only hiresync's migrations. hiresync
 * neither builds an account's tables in it nor drops it, even when it is empty
 * (another application's comment or grants may be all it holds yet).
 */
export class ForeignSchemaError extends HiresyncError {
  readonly schema: string;
  constructor(schema: string) {
    super(
      `schema ${schema} already exists and hiresync did not create it (it carries no hiresync account-schema mark), so hiresync does not take it, even empty: choose another name for the account, or, if that schema is unused, drop it ('drop schema ${schema}') and add the account again`,
    );
    this.schema = schema;
  }
}

const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Whose schema `schema` is:
 * - `absent` when it does not exist: hiresync may create it for an account;
 * - `hiresync` when it is an account schema of hiresync's: marked so by its
 *   comment ({@link accountSchemaComment}), or (schemas hiresync built before
 *   it marked them) its own `kysely_migration` lists only hiresync's warehouse
 *   migrations, at least one. So is one kept by `remove` without
 *   --drop-data, which an `add` of the same name takes back;
 * - `other` for any other schema, even an empty one (another application may
 *   have made it, with its comment or grants, for tables yet to come), and
 *   whether or not another application keeps its own Kysely migrations there:
 *   hiresync must neither build its tables in it nor drop it.
 */
export async function schemaOwner(
  db: Kysely<Database>,
  schema: string,
): Promise<'absent' | 'hiresync' | 'other'> {
  const { rows } = await sql<{ comment: string | null; tracked: boolean }>`
    select obj_description(n.oid, 'pg_namespace') as comment,
           exists (select 1 from pg_class c
                   join pg_attribute a on a.attrelid = c.oid and a.attname = 'name'
                                      and not a.attisdropped
                   where c.relnamespace = n.oid and c.relname = 'kysely_migration'
                     and c.relkind in ('r', 'p') and has_table_privilege(c.oid, 'select')) as tracked
    from pg_namespace n where nspname = ${schema}`.execute(db);
  const row = rows[0];
  if (!row) return 'absent';
  if (row.comment === accountSchemaComment(schema)) return 'hiresync';
  if (!row.tracked) return 'other';
  const known = new Set(await migrationNames());
  const { rows: applied } = await sql<{ name: string | null }>`
    select name::text as name from ${sql.id(schema, 'kysely_migration')}`.execute(db);
  return applied.length > 0 && applied.every((r) => r.name !== null && known.has(r.name))
    ? 'hiresync'
    : 'other';
}
