import { createHash } from 'node:crypto';
import { type Kysely, sql, type Transaction } from 'kysely';
import { analyticsSchemaOf } from '../../account-name.js';
import { HiresyncError } from '../../errors.js';
import { ANALYTICS_SET } from '../../sync/analytics-set.js';
import { analyticsSchemaMark } from '../layout/account-schema-owner.js';
import { ident, literal } from '../layout/account-views.js';
import { ALL_ACCOUNTS_SCHEMA } from '../layout/migrate.js';
import { createSharedListTables } from '../layout/shared-list-tables.js';
import { LOCK_SPACE, lockKey } from '../lock-keys.js';
import type { Database } from '../tables.js';
import { definitionsText, placeAnalytics } from './analytics-placement.js';

type Trx = Transaction<Database>;

/**
 * Makes the shared tables of every resource the analytics views read, where
 * missing (see createSharedListTables): the views read them whether or not an
 * account syncs the resource. This registers no resource for any account (no
 * view in its schema, no run). Returns true when it made some.
 */
export async function ensureAnalyticsTables(trx: Trx): Promise<boolean> {
  let made = false;
  for (const name of ANALYTICS_SET) made = (await createSharedListTables(trx, name)) || made;
  return made;
}

/** The comment of `account`'s analytics schema, naming the definitions it holds (see {@link schemaMark}). */
function schemaComment(account: string, schema: string): string {
  const fingerprint = createHash('sha256')
    .update(definitionsText(schema, { account }))
    .digest('hex')
    .slice(0, 16);
  return `${analyticsSchemaMark(account)} the analytics views of its rows (docs/analytics.md), built by hiresync migrate; hiresync owns this schema and drops it with the account's data. Definitions ${fingerprint}.`;
}

/** An account's analytics schema exists and is not hiresync's: nothing is built in it. */
export class ForeignAnalyticsSchemaError extends HiresyncError {}

/**
 * Brings the analytics schema of each of `accounts` (see analyticsSchemaOf)
 * up to date, each in a transaction of its own under a lock of its own: the
 * shared tables the views read (once), then the schema (made and marked as
 * hiresync's), its views and pipeline_as_of. A schema whose mark names the
 * current definitions is not touched (one query for all of them), so an
 * up-to-date deployment costs no work per account; a release changing a
 * definition changes the mark, and the next migrate applies it. A schema of
 * the name that hiresync did not make is left alone, with a warning (see
 * {@link ForeignAnalyticsSchemaError}). Returns the schemas built or rebuilt,
 * whether shared tables were made, and the warnings.
 */
export async function ensureAccountAnalytics(
  db: Kysely<Database>,
  accounts: readonly string[],
): Promise<{ schemas: string[]; tablesMade: boolean; warnings: string[] }> {
  const tablesMade = await db.transaction().execute((trx) => ensureAnalyticsTables(trx));
  const wanted = accounts.map((account) => ({
    account,
    schema: analyticsSchemaOf(account),
    comment: schemaComment(account, analyticsSchemaOf(account)),
  }));
  const { rows } = await sql<{ schema: string; comment: string | null }>`
    select nspname as schema, obj_description(oid, 'pg_namespace') as comment
    from pg_namespace where nspname = any(${wanted.map((w) => w.schema)}::text[])`.execute(db);
  const comments = new Map(rows.map((r) => [r.schema, r.comment]));
  const schemas: string[] = [];
  const warnings: string[] = [];
  for (const { account, schema, comment } of wanted) {
    if (comments.get(schema) === comment) continue;
    try {
      await placeSchema(db, account, schema, comment);
      schemas.push(schema);
    } catch (error) {
      if (!(error instanceof ForeignAnalyticsSchemaError)) throw error;
      warnings.push(error.message);
    }
  }
  return { schemas, tablesMade, warnings };
}

/** The body of {@link ensureAccountAnalytics} for one account: its schema made (or found hiresync's) and filled. */
async function placeSchema(
  db: Kysely<Database>,
  account: string,
  schema: string,
  comment: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${lockKey(`analytics ${schema}`)}::int)`.execute(
      trx,
    );
    const { rows: found } = await sql<{ comment: string | null; exists: boolean }>`
        select to_regnamespace(${ident(schema)}) is not null as exists,
          (select obj_description(oid, 'pg_namespace') from pg_namespace where nspname = ${schema}) as comment`.execute(
      trx,
    );
    const current = found[0];
    if (current?.comment === comment) return;
    if (current?.exists && !current.comment?.startsWith(analyticsSchemaMark(account))) {
      throw new ForeignAnalyticsSchemaError(
        `schema ${schema} exists and is not hiresync's (it lacks the comment '${analyticsSchemaMark(account)} …'): account ${account}'s analytics views are not built there; rename or drop that schema, then run 'hiresync migrate'`,
      );
    }
    if (!current?.exists) await sql`create schema ${sql.id(schema)}`.execute(trx);
    await placeAnalytics(trx, schema, { account });
    await sql.raw(`comment on schema ${ident(schema)} is ${literal(comment)}`).execute(trx);
  });
}

/**
 * Puts the analytics views and pipeline_as_of across accounts in schema
 * all_accounts (which exists; the shared tables too, see
 * {@link ensureAnalyticsTables}), in the caller's transaction: each view the
 * union of every shown account's rows, `account` first, by the same
 * generator as each account's. Granted to no one.
 */
export async function placeAllAccountsAnalytics(trx: Trx): Promise<void> {
  await placeAnalytics(trx, ALL_ACCOUNTS_SCHEMA, 'all accounts');
}
