import type { ApiConfig, ResourceName } from '../config.js';
import type { PageSource } from '../sync/ports.js';
import type { ApiClient } from './api-client.js';
import { firstPageUrl } from './create-api-client.js';
import { fetchPages, type Page } from './fetch-pages.js';

/** The sync engine's view of the API. */
export class ApiPageSource implements PageSource {
  readonly #client: ApiClient;
  readonly #config: ApiConfig;

  constructor(client: ApiClient, config: ApiConfig) {
    this.#client = client;
    this.#config = config;
  }

  firstPageUrl(resource: ResourceName): string {
    return firstPageUrl(this.#config, resource);
  }

  filterOf(resource: ResourceName): string | undefined {
    return resource === 'jobs' && this.#config.jobsStatus !== undefined
      ? `status=${this.#config.jobsStatus}`
      : undefined;
  }

  pages(
    startUrl: string,
    startPage: number,
    options: { signal?: AbortSignal | undefined; prefetch?: boolean } = {},
  ): AsyncIterable<Page> {
    return fetchPages({
      client: this.#client,
      startUrl,
      startPage,
      recordsKey: this.#config.recordsKey,
      ...options,
    });
  }
}
