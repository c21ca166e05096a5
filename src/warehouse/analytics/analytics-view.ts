import { ident } from '../layout/account-views.js';
import type { Scope } from './scope.js';

/** A column of an analytics view: its name, Postgres type and one-line definition (its comment). */
export interface AnalyticsColumn {
  readonly name: string;
  readonly type: string;
  readonly comment: string;
}

/** An analytics view (docs/analytics.md): one generator of its SQL for both scopes. */
export interface AnalyticsView {
  readonly name: string;
  /** Its one-line definition: the view's comment. */
  readonly comment: string;
  readonly columns: readonly AnalyticsColumn[];
  /**
   * A select over `scope` whose columns are `account`, then at least
   * {@link columns} by name (their order and types are the wrapper's).
   */
  readonly body: (scope: Scope) => string;
}

/** The shorthand of a column: `[name, type, comment]`. */
export function columns(
  ...list: ReadonlyArray<readonly [string, string, string]>
): AnalyticsColumn[] {
  return list.map(([name, type, comment]) => ({ name, type, comment }));
}

/** The comment of column `account` in the all_accounts unions. */
export const ACCOUNT_COLUMN_COMMENT =
  "The account the row belongs to: 'default' (schema analytics) or a registered account (schema NAME_analytics).";

/**
 * The select of `view` over `scope`: its declared columns in order, each cast
 * to its declared type, `account` first for all accounts. The body is the
 * same text for both scopes but for the account condition.
 */
export function viewSelect(
  body: string,
  declared: readonly AnalyticsColumn[],
  scope: Scope,
): string {
  const list = [
    ...(scope === 'all accounts' ? ['v.account'] : []),
    ...declared.map((c) => `v.${ident(c.name)}::${c.type} as ${ident(c.name)}`),
  ];
  return `select ${list.join(', ')}\nfrom (${body}) v`;
}

/** The columns of `view` in `scope`: `account` (text) first for all accounts. */
export function scopeColumns(
  declared: readonly AnalyticsColumn[],
  scope: Scope,
): AnalyticsColumn[] {
  return scope === 'all accounts'
    ? [{ name: 'account', type: 'text', comment: ACCOUNT_COLUMN_COMMENT }, ...declared]
    : [...declared];
}
