import type { ApiConfig } from '../config/types.js';
import type { ResourceCatalog, ResourceDeclaration } from '../resources/index.js';
import { listUrl } from '../resources/read-plan.js';
import type { Page, PageSource, PageWalkOptions, ResourceName } from '../sync/ports.js';
import type { ApiClient } from './api-client.js';
import { fetchPages } from './fetch-pages.js';

/** The sync engine's view of the API: pages of the declared resources. */
export class ApiPageSource implements PageSource {
  readonly #client: ApiClient;
  readonly #config: ApiConfig;
  readonly #resources: ResourceCatalog;

  constructor(client: ApiClient, config: ApiConfig, resources: ResourceCatalog) {
    this.#client = client;
    this.#config = config;
    this.#resources = resources;
  }

  #declaration(name: ResourceName): ResourceDeclaration {
    const declaration = this.#resources.get(name);
    if (!declaration) throw new Error(`no declaration for resource ${JSON.stringify(name)}`);
    return declaration;
  }

  firstPageUrl(resource: ResourceName): string {
    return listUrl(this.#config, this.#declaration(resource));
  }

  pages(startUrl: string, startPage: number, options: PageWalkOptions = {}): AsyncIterable<Page> {
    return fetchPages({
      client: this.#client,
      startUrl,
      startPage,
      recordsKey: this.#config.recordsKey,
      ...options,
    });
  }
}
