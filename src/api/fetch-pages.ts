import { createHash } from 'node:crypto';
import { PaginationLoopError, UnexpectedBodyError } from '../errors.js';
import { containsSecret, excerpt } from '../secret.js';
import type { Page, PageWalkOptions } from '../sync/ports.js';
import type { ApiClient } from './api-client.js';
import { readApiClock } from './api-clock.js';
import { findNextLink } from './link-header.js';

/** Options of {@link fetchPages}. */
export interface FetchPagesOptions {
  client: ApiClient;
  /** Where to start: a first-page URL, or a checkpointed `next` URL. */
  startUrl: string;
  /** Number of the page at `startUrl`. Default 1. */
  startPage?: number;
  /**
   * `startUrl` is a checkpointed `next` URL (a resumed run). A 422 for a `next`
   * URL, checkpointed or just received, means the API no longer takes that
   * cursor (CursorRejectedError), which the run answers by restarting from its
   * first page; a 422 for the first page is a bad filter or per_page. Default
   * false.
   */
  fromCheckpoint?: boolean;
  /** Property of an object body holding the records; undefined: the body is the array. */
  recordsKey?: string | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Fetch the next page while the caller handles the current one. The caller
   * still sees pages one at a time, in order; a page is only fetched early,
   * never handed out early. Default false.
   */
  prefetch?: boolean;
  /** Called with each page once it has arrived and been parsed (for a prefetched one, early). */
  prepare?: (page: Page) => void;
  /** Told of each rate-limit wait before it starts (see PageWalkOptions). */
  onRateLimitWait?: PageWalkOptions['onRateLimitWait'];
  /** Named, with the page's number, in the debug line of each request (see PageWalkOptions). */
  requestLog?: PageWalkOptions['requestLog'];
}

/**
 * Parses a list body into its records, failing clearly on any other shape.
 * `baseUrlSetting` names where the base URL is set (default HIRESYNC_BASE_URL).
 */
export function parseRecords(
  body: string,
  path: string,
  recordsKey: string | undefined,
  contentType?: string,
  baseUrlSetting = 'HIRESYNC_BASE_URL',
): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const type = contentType ? `${contentType.split(';')[0]?.trim()} ` : '';
    // A body that starts as JSON is a page cut short or malformed: its text
    // may hold records, which the field policy would drop or hash, and the
    // error reaches sync_runs.error, the logs and the queue. Never quoted.
    if (/^[\s\ufeff]*[[{]/.test(body)) {
      throw new UnexpectedBodyError(
        `response from ${path} is not valid JSON: a ${type}body of ${Buffer.byteLength(body)} bytes that starts as JSON but is cut short or malformed (not quoted: it may hold records); check ${baseUrlSetting} and what answers there`,
      );
    }
    throw new UnexpectedBodyError(
      `response from ${path} is not JSON but a ${type}body starting ${JSON.stringify(excerpt(body, 60))}; ` +
        `check ${baseUrlSetting} (a proxy or login page answering instead of the API?)`,
    );
  }
  const records =
    recordsKey === undefined ? parsed : (parsed as Record<string, unknown> | null)?.[recordsKey];
  if (!Array.isArray(records)) {
    const shape = Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed;
    const hint =
      recordsKey === undefined
        ? '; if the API wraps the records in an object, set HIRESYNC_RECORDS_KEY to its property name'
        : `; HIRESYNC_RECORDS_KEY=${recordsKey} names no array in it`;
    throw new UnexpectedBodyError(
      `response from ${path} is ${shape}, not a JSON array of records${hint}`,
    );
  }
  return records;
}

/**
 * The URLs one walk has read, each as a SHA-256 digest (cursors can be long)
 * mapped to its page number: a `next` link to any of them is a loop.
 */
class VisitedUrls {
  readonly #pages = new Map<string, number>();

  static #key(url: string): string {
    return createHash('sha256').update(url).digest('base64');
  }

  add(url: string, number: number): void {
    this.#pages.set(VisitedUrls.#key(url), number);
  }

  pageOf(url: string): number | undefined {
    return this.#pages.get(VisitedUrls.#key(url));
  }
}

/** Fetches and checks one page. */
async function fetchPage(
  options: FetchPagesOptions,
  url: string,
  number: number,
  signal: AbortSignal,
  visited: VisitedUrls,
  cursor: boolean,
): Promise<Page> {
  const { client } = options;
  const response = await client.get(url, signal, {
    cursor,
    onRateLimitWait: options.onRateLimitWait,
    logFields: { ...options.requestLog, page: number },
    resource: options.requestLog?.resource,
  });
  const apiClock = readApiClock(response.headers.date, Date.now());
  const path = new URL(url).pathname;
  const records = parseRecords(
    response.body,
    path,
    options.recordsKey,
    headerText(response.headers['content-type']),
    client.baseUrlSetting,
  );
  const nextUrl = findNextLink(response.headers.link, url);
  if (nextUrl !== undefined) {
    client.assertSameOrigin(nextUrl);
    // The next link is checkpointed in Redis as text: one that echoes a token
    // or secret must not be stored (nor followed).
    if (containsSecret(nextUrl)) {
      throw new UnexpectedBodyError(
        `the API's next link on ${path}'s page ${number} holds a credential hiresync sent; refusing to store or follow it (report it to the API's vendor)`,
      );
    }
    const earlier = nextUrl === url ? number : visited.pageOf(nextUrl);
    if (earlier === number) {
      throw new PaginationLoopError(
        `the API returned ${path}'s page ${number} as its own next page; stopping to avoid a loop`,
      );
    }
    if (earlier !== undefined) {
      throw new PaginationLoopError(
        `the API's next link on ${path}'s page ${number} leads back to page ${earlier} of this walk; stopping to avoid a loop`,
      );
    }
    visited.add(nextUrl, number + 1);
  }
  const page: Page = { number, url, records, body: response.body, nextUrl, apiClock };
  options.prepare?.(page);
  return page;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Walks a list endpoint page by page, following each `next` link exactly as
 * received, until a page has none. The caller writes and checkpoints each page
 * before asking for the next, so a crash costs at most the page in hand.
 * A `next` link to another origin, or to any URL this walk has already read
 * (B → C → B as well as B → B), ends the walk with an error before any
 * request is sent for it. With `prefetch`, the next
 * page is requested while the caller handles the current one; stopping early
 * aborts that request.
 */
export async function* fetchPages(
  options: FetchPagesOptions,
): AsyncGenerator<Page, void, undefined> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort);
  if (options.signal?.aborted) onAbort();
  const visited = new VisitedUrls();
  visited.add(options.startUrl, options.startPage ?? 1);
  const fetchNext = (page: Page, nextUrl: string) =>
    fetchPage(options, nextUrl, page.number + 1, controller.signal, visited, true);
  let pending: Promise<Page> | undefined = fetchPage(
    options,
    options.startUrl,
    options.startPage ?? 1,
    controller.signal,
    visited,
    options.fromCheckpoint === true,
  );
  try {
    while (pending !== undefined) {
      const page: Page = await pending;
      pending = undefined;
      if (page.nextUrl !== undefined && options.prefetch) {
        pending = fetchNext(page, page.nextUrl);
        // Observed here so an early stop never leaves an unhandled rejection.
        pending.catch(() => {});
      }
      yield page;
      if (page.nextUrl !== undefined && !options.prefetch) pending = fetchNext(page, page.nextUrl);
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    controller.abort(new Error('page walk stopped'));
  }
}
