import { Dataset, type DatasetOptions, type SimResource } from './dataset.js';
import type { Fault } from './faults.js';
import { FixedWindow, type RateLimit } from './rate-limiter.js';
import { withDefaults } from './shape.js';
import type { SimulatedAccount } from './simulated-accounts.js';
import { WORLD_RESOURCES } from './world/world.js';

/** What one account has seen: its share of the simulator's stats. */
export interface AccountStats {
  listRequests: number;
  byStatus: Record<string, number>;
  tokensIssued: number;
  /** List requests answered 429. */
  rateLimited: number;
}

/** An account as the simulator runs it. */
export interface AccountState {
  readonly name: string;
  readonly clientId: string | undefined;
  readonly clientSecrets: readonly string[];
  readonly apiKeys: readonly string[];
  readonly dataset: Dataset;
  /** Its rate limit's window, counted for this account alone; none without a rate limit. */
  readonly window: FixedWindow | undefined;
  readonly nonAdminSubs: readonly string[];
  forbidden: boolean;
  /** Faults for this account's next list requests, before the shared ones. */
  readonly faults: Fault[];
  readonly stats: AccountStats;
}

/** What every account shares, from the simulator's options. */
export interface AccountRegistryOptions {
  /** Dataset options of the simulator's shape: each account's dataset options left undefined take these. */
  datasetDefaults?: DatasetOptions;
  /** Names of the extra resources served. */
  extraNames: ReadonlySet<string>;
  /** The default of every account's `DatasetOptions.clockSkewMs`. */
  clockSkewMs: number | undefined;
  /** The window of an account that states none. */
  rateLimit: RateLimit | undefined;
  /** Windows aligned on the epoch (`rateLimitResetFormat: 'epoch'`). */
  alignedWindows?: boolean;
  /** Path of the tracking links list. Default `/v3/tracking_links`. */
  trackingLinksPath: string | undefined;
}

/**
 * The accounts served, by name, client id and API key, and the list paths
 * their datasets serve.
 */
export class AccountRegistry {
  readonly #options: AccountRegistryOptions;
  /** Every account by name, the default one first. */
  readonly #accounts = new Map<string, AccountState>();
  readonly #byClientId = new Map<string, AccountState>();
  readonly #byApiKey = new Map<string, AccountState>();
  /** List paths of the resources any account's dataset declares or holds as extra. */
  readonly #listPaths = new Map<string, SimResource>();
  /** List paths of the extra resources some account serves, in the order first registered. */
  readonly #extraPaths = new Set<string>();
  /** List paths of the v3 world's resources some account serves. */
  readonly #worldPaths = new Set<string>();

  constructor(options: AccountRegistryOptions) {
    this.#options = options;
  }

  /** Registers an account; throws on a name, client id or API key already taken. */
  add(account: SimulatedAccount): AccountState {
    const { name } = account;
    if (!name) throw new Error('a simulated account needs a name');
    if (this.#accounts.has(name)) throw new Error(`two simulated accounts are named ${name}`);
    if (account.clientId !== undefined && !account.clientSecrets)
      throw new Error(`simulated account ${name} has a client id but no client secret`);
    const dataset =
      account.dataset instanceof Dataset
        ? account.dataset
        : new Dataset({
            ...withDefaults(this.#options.datasetDefaults ?? {}, account.dataset ?? {}),
            clockSkewMs: account.dataset?.clockSkewMs ?? this.#options.clockSkewMs,
            extraResources: account.dataset?.extraResources ?? [...this.#options.extraNames],
          });
    const rateLimit =
      account.rateLimit === undefined ? this.#options.rateLimit : (account.rateLimit ?? undefined);
    const state: AccountState = {
      name,
      clientId: account.clientId,
      clientSecrets: account.clientSecrets ?? [],
      apiKeys: account.apiKeys ?? [],
      dataset,
      window: rateLimit ? new FixedWindow(rateLimit, this.#options.alignedWindows) : undefined,
      nonAdminSubs: account.nonAdminSubs ?? [],
      forbidden: account.forbidden ?? false,
      faults: [],
      stats: { listRequests: 0, byStatus: {}, tokensIssued: 0, rateLimited: 0 },
    };
    if (state.clientId !== undefined) {
      const holder = this.#byClientId.get(state.clientId);
      if (holder)
        throw new Error(
          `simulated accounts ${holder.name} and ${name} share client id ${state.clientId}`,
        );
      this.#byClientId.set(state.clientId, state);
    }
    for (const key of state.apiKeys) {
      const holder = this.#byApiKey.get(key);
      if (holder) throw new Error(`simulated accounts ${holder.name} and ${name} share an API key`);
      this.#byApiKey.set(key, state);
    }
    // Paths as a deployment would configure them; the default account's come first.
    const paths = { trackingLinksPath: this.#options.trackingLinksPath ?? '/v3/tracking_links' };
    for (const declaration of dataset.resources.values()) {
      const path = declaration.path(paths);
      if (!this.#listPaths.has(path)) this.#listPaths.set(path, declaration.name);
    }
    // The v3 world's lists: a catalog declaring one of them keeps its own path.
    for (const name of dataset.world ? WORLD_RESOURCES : []) {
      const path = `/v3/${name}`;
      if (this.#listPaths.has(path)) continue;
      this.#listPaths.set(path, name);
      this.#worldPaths.add(path);
    }
    for (const extra of dataset.extraResources.values()) {
      if (!this.#options.extraNames.has(extra.name) || this.#listPaths.has(extra.path)) continue;
      this.#listPaths.set(extra.path, extra.name);
      this.#extraPaths.add(extra.path);
    }
    this.#accounts.set(name, state);
    return state;
  }

  /** Account `name`; throws when the simulator serves none of that name. */
  get(name: string): AccountState {
    const account = this.#accounts.get(name);
    if (!account) throw new Error(`the simulator serves no account ${name}`);
    return account;
  }

  /** Account `name`, if served. */
  find(name: string): AccountState | undefined {
    return this.#accounts.get(name);
  }

  /** The account whose client credentials grant uses client id `clientId`. */
  byClientId(clientId: string): AccountState | undefined {
    return this.#byClientId.get(clientId);
  }

  /** The account of transition API key `key`. */
  byApiKey(key: string): AccountState | undefined {
    return this.#byApiKey.get(key);
  }

  /** The resource listed at `path`, if some account serves one there. */
  resourceAt(path: string): SimResource | undefined {
    return this.#listPaths.get(path);
  }

  /** Names of the accounts, the default one first. */
  get names(): string[] {
    return [...this.#accounts.keys()];
  }

  /** List paths of the extra resources served, in the order first registered. */
  get extraListPaths(): string[] {
    return [...this.#extraPaths];
  }

  /** List paths of the v3 world's resources served (see DatasetOptions.world). */
  get worldListPaths(): string[] {
    return [...this.#worldPaths];
  }
}
