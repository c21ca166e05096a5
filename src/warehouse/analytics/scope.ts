import { literal } from '../layout/account-views.js';
import { SHOWN_ACCOUNTS } from '../layout/all-accounts-members.js';

/**
 * Whose rows an analytics view reads: one account's (the views of its
 * analytics schema), or every shown account's, grouped by account (the
 * unions of schema all_accounts). Both are made by the same generator, so
 * they can never differ in definition: only the account condition and the
 * leading `account` column differ.
 */
export type Scope = { readonly account: string } | 'all accounts';

/**
 * The account condition of a read of one shared table (its column `account`
 * unqualified): the one place the account literal is applied. One account: a
 * literal, as account-views.ts's views (a security barrier view's constant
 * condition prunes the shared table to the account's partition). All
 * accounts: default's and the registered accounts' rows (SHOWN_ACCOUNTS).
 */
export function accountCondition(scope: Scope): string {
  return scope === 'all accounts' ? SHOWN_ACCOUNTS : `account = ${literal(scope.account)}`;
}

/** When a read takes its records: now (not deleted), or as hiresync's history held them at `$1`. */
export type Moment = 'current' | 'as of $1';

/**
 * The records of a list resource stored in shared storage
 * (`hiresync.data_NAME_data`, or its history `hiresync.data_NAME_history`)
 * that `scope` reads, as `(account, id, data)`: the current ones not deleted,
 * or the versions current at `$1` and not deleted then.
 */
export function records(name: string, scope: Scope, moment: Moment = 'current'): string {
  return moment === 'current'
    ? `select account, id, data from hiresync."data_${name}_data" where deleted_at is null and (${accountCondition(scope)})`
    : `select account, id, data from hiresync."data_${name}_history" where valid_from <= $1 and (valid_to is null or valid_to > $1) and not deleted and (${accountCondition(scope)})`;
}

/**
 * The rows (not deleted) of a built-in shared table (`hiresync.data_jobs`,
 * `data_sources`, …) that `scope` reads, every column.
 */
export function builtIn(table: string, scope: Scope): string {
  return `select * from hiresync."data_${table}" where deleted_at is null and (${accountCondition(scope)})`;
}

/** Days from timestamp `a` to `b`, fractional (docs/analytics.md): negative kept, null when either is. */
export function days(a: string, b: string): string {
  return `extract(epoch from (${b} - ${a})) / 86400`;
}

/** `numerator / denominator` as numeric, null when the denominator is 0. */
export function rate(numerator: string, denominator: string): string {
  return `${numerator}::numeric / nullif(${denominator}, 0)`;
}
