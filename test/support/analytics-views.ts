import { type Kysely, sql } from 'kysely';
import { ANALYTICS_SET } from '../../src/sync/analytics-set.js';
import type { Database } from '../../src/warehouse/tables.js';
import {
  type AnalyticsView,
  type ColumnKind,
  PIPELINE_AS_OF_COLUMNS,
  selectListOf,
  VIEW_COLUMNS,
} from './analytics-reference/columns.js';
import type { Row } from './analytics-reference/index.js';

/** The lists of the set `@analytics` that the views read: every one but users and offices. */
export const VIEW_LISTS: readonly string[] = ANALYTICS_SET.filter(
  (name) => name !== 'users' && name !== 'offices',
);

/** The analytics schema of an account: `analytics` for default, `NAME_analytics` for NAME. */
export function analyticsSchemaOf(account: string): string {
  return account === 'default' ? 'analytics' : `${account}_analytics`;
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

async function select(
  db: Kysely<Database>,
  from: string,
  columns: Readonly<Record<string, ColumnKind>>,
  withAccount: boolean,
): Promise<Row[]> {
  const list = `${withAccount ? 'account, ' : ''}${selectListOf(columns)}`;
  const { rows } = await sql<Row>`select ${sql.raw(list)} from ${sql.raw(from)}`.execute(db);
  return rows;
}

/** What an account's views answer, read in one transaction, and that transaction's now(). */
export interface ViewAnswers {
  now: number;
  views: Record<AnalyticsView, Row[]>;
}

/**
 * Every view of `schema`, in the reference's representation (ids as text,
 * times as epoch ms), with `account` first when `withAccount` (all_accounts).
 */
export async function readViews(
  db: Kysely<Database>,
  schema: string,
  withAccount = false,
): Promise<ViewAnswers> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ now: number }>`
      select (extract(epoch from now()) * 1000)::float8 as now`.execute(trx);
    const views = {} as Record<AnalyticsView, Row[]>;
    for (const [view, columns] of Object.entries(VIEW_COLUMNS) as Array<
      [AnalyticsView, Readonly<Record<string, ColumnKind>>]
    >) {
      views[view] = await select(trx, `${ident(schema)}.${ident(view)}`, columns, withAccount);
    }
    return { now: rows[0]?.now ?? Number.NaN, views };
  });
}

/** The rows of `schema.pipeline_as_of(at)` (`at` epoch ms). */
export async function readPipelineAsOf(
  db: Kysely<Database>,
  schema: string,
  at: number,
  withAccount = false,
): Promise<Row[]> {
  const from = `${ident(schema)}.pipeline_as_of(to_timestamp(${Number(at) / 1000}))`;
  return select(db, from, PIPELINE_AS_OF_COLUMNS, withAccount);
}

/** The rows of `account` in all_accounts' answers, without the account column. */
export function sliceOf(rows: readonly Row[], account: string): Row[] {
  return rows.filter((row) => row.account === account).map(({ account: _account, ...row }) => row);
}
