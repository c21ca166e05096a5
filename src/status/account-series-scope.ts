import { DEFAULT_ACCOUNT } from '../account-name.js';
import type { AccountSeries } from './account-series.js';

/**
 * At most this many accounts that need action keep series of their own in a
 * scrape that leaves out the healthy accounts' (their counts stay in the
 * aggregates): an outage that fails every account must not bring the
 * 10,000-account body back.
 */
export const NEEDS_ACTION_MAX = 500;

/**
 * The reasons an account needs action, most severe first (an account counts
 * under its most severe): the cap keeps the most severe.
 */
export const ACTION_REASONS = [
  'credentials_refused',
  'needs_reauthorization',
  'failing',
  'stale',
] as const;
const [REFUSED, REAUTHORIZE, FAILING, STALE] = [0, 1, 2, 3];

/** The states `hiresync_accounts` counts the enabled accounts by. */
export const ACCOUNT_STATES = ['enabled', 'needs_reauthorization', 'credentials_refused'] as const;

/** The states `hiresync_account_resources` counts the (account, resource) pairs by. */
export const PAIR_STATES = ['ok', 'stale', 'failed'] as const;

/** What a scrape shows of the accounts: the per-account series it holds, and the aggregates. */
export interface ScopedSeries extends AccountSeries {
  /** Whether the per-account series are every account's (else only those that need action). */
  perAccount: boolean;
  /** Enabled accounts (`default` included when it has credentials) by state. */
  accounts: Record<(typeof ACCOUNT_STATES)[number], number>;
  /** The (account, resource) pairs synced now with a finished run, by resource and state. */
  pairs: Array<{ resource: string; state: (typeof PAIR_STATES)[number]; count: number }>;
  /** Per resource, the oldest of its pairs' last successes (epoch seconds). */
  oldest: Array<{ resource: string; at: number }>;
  /**
   * By the most severe reason of each: the accounts that need action, all of
   * them, and how many of those the per-account series leave out.
   */
  needingAction: Array<{ reason: (typeof ACTION_REASONS)[number]; count: number; leftOut: number }>;
}

/** Options of {@link scopeAccountSeries}. */
export interface ScopeOptions {
  /** Whether the account syncs the resource now (a resource left out must not look stale). */
  isSynced: (account: string, resource: string) => boolean;
  /** `default` counts as an enabled account. */
  withDefault: boolean;
  /** Every account's series while the enabled accounts are at most this many (Infinity: always). */
  accountSeries: number;
  /** Now, epoch seconds. */
  nowSeconds: number;
  /** A pair whose last success is older than this is stale (it needs action). */
  staleAfterSeconds: number;
}

/**
 * The series a scrape holds of what Postgres says of the accounts. Up to
 * `accountSeries` enabled accounts, every account's, as read; above, only
 * those of the accounts that need action (a resource failing or stale, a
 * partner to authorize again, credentials refused; at most
 * {@link NEEDS_ACTION_MAX}: the most severe first, credentials refused, then
 * authorization gone, then a resource failing, then only stale, each by name), with only the failing or stale pairs of
 * an account and its state only when it is not enabled. The aggregates count
 * every account in both cases.
 */
export function scopeAccountSeries(read: AccountSeries, options: ScopeOptions): ScopedSeries {
  const lastSuccesses = read.lastSuccesses.filter((s) => options.isSynced(s.account, s.resource));
  const lastRuns = read.lastRuns.filter((r) => options.isSynced(r.account, r.resource));
  const accounts = {
    enabled: options.withDefault ? 1 : 0,
    needs_reauthorization: 0,
    credentials_refused: 0,
  };
  for (const p of read.partners)
    accounts[p.needsReauthorization ? 'needs_reauthorization' : 'enabled'] += 1;
  for (const c of read.credentialed)
    accounts[c.credentialsRefused ? 'credentials_refused' : 'enabled'] += 1;

  const staleBefore = options.nowSeconds - options.staleAfterSeconds;
  const lastSuccessOf = new Map(lastSuccesses.map((s) => [`${s.account}\n${s.resource}`, s.at]));
  const counts = new Map<string, number>();
  const oldest = new Map<string, number>();
  // Each account that needs action, by its most severe reason (a lower rank is more severe).
  const needsAction = new Map<string, number>();
  const flag = (account: string, rank: number) =>
    needsAction.set(account, Math.min(rank, needsAction.get(account) ?? rank));
  const actionPairs = new Set<string>();
  for (const r of lastRuns) {
    const key = `${r.account}\n${r.resource}`;
    const at = lastSuccessOf.get(key);
    const state = r.failed ? 'failed' : at === undefined || at < staleBefore ? 'stale' : 'ok';
    counts.set(`${r.resource}\n${state}`, (counts.get(`${r.resource}\n${state}`) ?? 0) + 1);
    if (at !== undefined) oldest.set(r.resource, Math.min(at, oldest.get(r.resource) ?? at));
    if (state !== 'ok') {
      flag(r.account, state === 'failed' ? FAILING : STALE);
      actionPairs.add(key);
    }
  }
  for (const p of read.partners) if (p.needsReauthorization) flag(p.account, REAUTHORIZE);
  for (const c of read.credentialed) if (c.credentialsRefused) flag(c.account, REFUSED);
  const enabled = accounts.enabled + accounts.needs_reauthorization + accounts.credentials_refused;
  const aggregates = {
    accounts,
    pairs: [...counts].map(([key, count]) => {
      const [resource = '', state = 'ok'] = key.split('\n');
      return { resource, state: state as ScopedSeries['pairs'][number]['state'], count };
    }),
    oldest: [...oldest].map(([resource, at]) => ({ resource, at })),
  };
  const needingAction = ACTION_REASONS.map((reason) => ({ reason, count: 0, leftOut: 0 }));
  for (const rank of needsAction.values()) (needingAction[rank] ?? { count: 0 }).count += 1;
  if (enabled <= options.accountSeries) {
    const { partners, credentialed } = read;
    return {
      perAccount: true,
      lastSuccesses,
      lastRuns,
      partners,
      credentialed,
      ...aggregates,
      needingAction,
    };
  }
  const bySeverity = [...needsAction].sort(
    ([a, rankA], [b, rankB]) => rankA - rankB || byName(a, b),
  );
  const shown = new Set(bySeverity.slice(0, NEEDS_ACTION_MAX).map(([account]) => account));
  for (const [, rank] of bySeverity.slice(NEEDS_ACTION_MAX))
    (needingAction[rank] ?? { leftOut: 0 }).leftOut += 1;
  const pairShown = (p: { account: string; resource: string }) =>
    shown.has(p.account) && actionPairs.has(`${p.account}\n${p.resource}`);
  return {
    perAccount: false,
    lastSuccesses: lastSuccesses.filter(pairShown),
    lastRuns: lastRuns.filter(pairShown),
    partners: read.partners.filter((p) => p.needsReauthorization && shown.has(p.account)),
    credentialed: read.credentialed.filter((c) => c.credentialsRefused && shown.has(c.account)),
    ...aggregates,
    needingAction,
  };
}

/** Account names in code-point order, `default` first. */
function byName(a: string, b: string): number {
  if (a === DEFAULT_ACCOUNT || b === DEFAULT_ACCOUNT) return a === DEFAULT_ACCOUNT ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
