import { type Kysely, sql, type Transaction } from 'kysely';
import {
  ensureAnalyticsTables,
  placeAllAccountsAnalytics,
} from '../analytics/analytics-schemas.js';
import { ANALYTICS_VIEWS } from '../analytics/analytics-views.js';
import { rebuildUnionViews, typedViewsOf } from '../layout/all-accounts-views.js';
import { ALL_ACCOUNTS_SCHEMA } from '../layout/migrate.js';
import type { Database } from '../tables.js';
import { rebuildTypedUnion } from '../typed-views/all-accounts-typed-views.js';

/**
 * Rebuilds schema `all_accounts` in one transaction: the views of every
 * account's rows (see rebuildUnionViews), then the unions of the typed views
 * (see rebuildTypedUnion). An account added or removed changes no view, so it
 * runs when what the views select changes (`migrate`, a list resource's first
 * tables), not per account.
 */
export function refreshAllAccountsViews(db: Kysely<Database>): Promise<{ warnings: string[] }> {
  return db.transaction().execute((trx) => rebuildViews(trx));
}

/**
 * Builds the all_accounts views when they are not there yet (a deployment
 * whose accounts are added before any `hiresync migrate`): one statement
 * when they are. They read the shared tables, so an account added needs no
 * rebuild.
 */
export async function ensureAllAccountsViews(
  db: Kysely<Database>,
): Promise<{ warnings: string[] }> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass(${`${ALL_ACCOUNTS_SCHEMA}.tracking_links_flat`}) is not null
      and to_regclass(${`${ALL_ACCOUNTS_SCHEMA}.${ANALYTICS_VIEWS[0]?.name}`}) is not null as present`.execute(
    db,
  );
  return rows[0]?.present ? { warnings: [] } : refreshAllAccountsViews(db);
}

/** The body of {@link refreshAllAccountsViews}, in the caller's transaction. */
export async function rebuildViews(trx: Transaction<Database>): Promise<{ warnings: string[] }> {
  // The shared tables first: their lock before the views' (as ensureListResources takes them).
  await ensureAnalyticsTables(trx);
  // In all_accounts an analytics view takes its name from a list resource's
  // union (rejection_reasons): the list stays reachable as NAME_flat and NAME_history.
  const { warnings } = await rebuildUnionViews(trx, {
    leaveTo: new Set(ANALYTICS_VIEWS.map((v) => v.name)),
  });
  for (const view of await typedViewsOf(trx)) {
    const { warning } = await rebuildTypedUnion(trx, view);
    if (warning) warnings.push(warning);
  }
  await placeAllAccountsAnalytics(trx);
  return { warnings };
}
