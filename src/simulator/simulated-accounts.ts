import { BUILT_IN_RESOURCES } from '../resources/index.js';
import type { Dataset, DatasetOptions, SimResource } from './dataset.js';
import { EXTRA_RESOURCE_NAMES } from './extra-resources.js';
import type { RateLimit } from './rate-limiter.js';

/**
 * A customer account the simulator serves beside the default one (the
 * top-level options), as the real API serves many customers: credentials,
 * data and rate budget of its own. A token minted for it reads only its data.
 */
export interface SimulatedAccount {
  /** Unique among the accounts; `default` names the top-level options' account. */
  name: string;
  /** Client id of the client credentials grant; none: that grant is refused for the account. */
  clientId?: string;
  /** Valid client secrets of `clientId` (several during a rotation). Required with `clientId`. */
  clientSecrets?: string[];
  /** Valid version 1/2 API keys for the transition endpoint. Default none. */
  apiKeys?: string[];
  /** Its data. Default a dataset of default options (seed 1, 250 records each, as the default account's). */
  dataset?: Dataset | DatasetOptions;
  /**
   * Its fixed window, counted for this account alone. Default (undefined) the
   * top-level `rateLimit`, also counted for this account alone; null: none.
   */
  rateLimit?: RateLimit | null;
  /** `sub` values whose users are not site administrators (lists answer 403). Default none. */
  nonAdminSubs?: string[];
  /** Lists answer 403 to every token of the account. Default false; see {@link ApiSimulator.setForbidden}. */
  forbidden?: boolean;
}

/** Name of the account the top-level options describe. */
export const DEFAULT_ACCOUNT = 'default';

/** Options of {@link simulatedAccounts}. */
export interface SimulatedAccountsOptions {
  /** Records per resource of each account. Default 20. */
  records?: number;
  /** Records of some resources, overriding `records`. */
  counts?: Partial<Record<SimResource, number>>;
  /** Each account's own window; default the top-level `rateLimit`, null: none. */
  rateLimit?: RateLimit | null;
  /** Other dataset options every account shares (flat tracking links, resources, extra resources, …). */
  dataset?: Omit<DatasetOptions, 'counts' | 'seed' | 'idOffset'>;
}

/**
 * `n` accounts, the same on every call: `acct001`, `acct002`, … with client
 * id `acct001-client`, secret `acct001-secret` and API key `acct001-api-key`;
 * account i's data has seed 100 + i and ids 10^6·i above the default
 * account's (distinct while each account holds under 142,857 records per
 * resource and i < 1000).
 */
export function simulatedAccounts(
  n: number,
  options: SimulatedAccountsOptions = {},
): SimulatedAccount[] {
  const records = options.records ?? 20;
  return Array.from({ length: n }, (_, k) => {
    const i = k + 1;
    const name = `acct${String(i).padStart(3, '0')}`;
    const counts: Record<SimResource, number> = {};
    const extras = options.dataset?.extraResources ?? EXTRA_RESOURCE_NAMES;
    for (const resource of [
      ...(options.dataset?.resources ?? BUILT_IN_RESOURCES).keys(),
      ...extras,
    ])
      counts[resource] = options.counts?.[resource] ?? records;
    const account: SimulatedAccount = {
      name,
      clientId: `${name}-client`,
      clientSecrets: [`${name}-secret`],
      apiKeys: [`${name}-api-key`],
      dataset: { ...options.dataset, counts, seed: 100 + i, idOffset: (i % 1000) * 1_000_000 },
    };
    if (options.rateLimit !== undefined) account.rateLimit = options.rateLimit;
    return account;
  });
}
