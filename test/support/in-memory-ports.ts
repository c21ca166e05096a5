/**
 * The sync engine's ports (src/sync/ports.ts) in memory: a run of
 * `runResource` against them needs no network, Postgres or Redis, so the
 * core's rules are tested in milliseconds.
 */
import { isDeepStrictEqual } from 'node:util';
import type {
  ApiClockReading,
  Checkpoint,
  CheckpointStore,
  CompletedRuns,
  Page,
  PageSource,
  PageWalkOptions,
  PageWriteOptions,
  PageWriteResult,
  PreparedPage,
  ResourceName,
  RunMode,
  RunStore,
  RunTotals,
  TypedViewRefresh,
} from '../../src/sync/ports.js';

/** A record of the in-memory API: an id, as the API's lists carry. */
export interface MemoryRecord {
  id: number;
  [field: string]: unknown;
}

/** Where the in-memory API lives. */
export const MEMORY_API = 'https://api.test/v3';

/**
 * A list API in memory: each resource's records in pages, newest first, each
 * page linking to the next by a cursor URL. Requests are recorded in order;
 * an error queued for a URL is thrown by its next request instead of the page.
 */
export class MemoryPageSource implements PageSource {
  readonly #pages = new Map<string, { records: MemoryRecord[]; nextUrl: string | undefined }>();
  readonly #failures = new Map<string, Error[]>();
  /** Every URL requested, in order. */
  readonly requested: string[] = [];
  /** The options of every walk, in order. */
  readonly walks: PageWalkOptions[] = [];

  /**
   * Serves `records` of `resource`, `perPage` a page, on the walk that
   * `walkQuery` asks for (default: the default walk); returns the pages' URLs.
   */
  serve(
    resource: ResourceName,
    records: MemoryRecord[],
    perPage: number,
    walkQuery?: string,
  ): string[] {
    const urls: string[] = [];
    const walk = walkQuery === undefined ? '' : `${walkQuery.replace(/[^a-z0-9]/gi, '-')}-`;
    for (let start = 0; start < Math.max(records.length, 1); start += perPage) {
      urls.push(
        start === 0
          ? this.firstPageUrl(resource, undefined, walkQuery)
          : `${MEMORY_API}/${resource}?cursor=${walk}${start}`,
      );
    }
    urls.forEach((url, index) => {
      this.#pages.set(url, {
        records: records.slice(index * perPage, (index + 1) * perPage),
        nextUrl: urls[index + 1],
      });
    });
    return urls;
  }

  /** `url` answers as `servedUrl` does (a first page sent with a filter). */
  alias(url: string, servedUrl: string): void {
    const page = this.#pages.get(servedUrl);
    if (!page) throw new Error(`nothing served at ${servedUrl}`);
    this.#pages.set(url, page);
  }

  /** The next request for `url` throws `error` instead of answering. */
  failNext(url: string, error: Error): void {
    this.#failures.set(url, [...(this.#failures.get(url) ?? []), error]);
  }

  firstPageUrl(resource: ResourceName, extraQuery?: string, walkQuery?: string): string {
    const url = `${MEMORY_API}/${resource}?per_page=100${walkQuery ? `&${walkQuery}` : ''}`;
    return extraQuery ? `${url}&${extraQuery}` : url;
  }

  async *pages(
    startUrl: string,
    startPage: number,
    options: PageWalkOptions = {},
  ): AsyncIterable<Page> {
    this.walks.push(options);
    let url: string | undefined = startUrl;
    let number = startPage;
    while (url !== undefined) {
      options.signal?.throwIfAborted();
      this.requested.push(url);
      const failure = this.#failures.get(url)?.shift();
      if (failure) throw failure;
      const served = this.#pages.get(url);
      if (!served) throw new Error(`nothing served at ${url}`);
      const page: Page = {
        number,
        url,
        records: served.records,
        body: JSON.stringify(served.records),
        nextUrl: served.nextUrl,
      };
      options.prepare?.(page);
      yield page;
      url = served.nextUrl;
      number += 1;
    }
  }
}

/** A run as the in-memory store keeps it. */
export interface MemoryRun {
  resource: ResourceName;
  mode: RunMode;
  filter: string | undefined;
  outcome: 'running' | 'succeeded' | 'failed';
  error?: string;
  pages: number;
  records: number;
  rejected: number;
  deleted: number;
  /** Highest id the run wrote. */
  maxId: string | null;
  apiClock?: ApiClockReading;
}

/** Ids compare as numbers of any size, as the warehouse compares them. */
function higher(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return BigInt(a) >= BigInt(b) ? a : b;
}

/**
 * The warehouse in memory: runs, and the rows each resource holds by id. A
 * record without an integer id is rejected, as the warehouse rejects it.
 */
export class MemoryRunStore implements RunStore {
  readonly runs = new Map<string, MemoryRun>();
  readonly rows = new Map<ResourceName, Map<string, MemoryRecord>>();
  /** The run that last wrote each id of each resource (seeded rows: none). */
  readonly lastSeen = new Map<ResourceName, Map<string, string>>();
  /** Ids a sweep marked deleted, by resource. */
  readonly deleted = new Map<ResourceName, Set<string>>();
  /** What `updatedSince` answers (the last run's start less the lookback). */
  updatedSinceAnswer: string | undefined;
  /** Thrown by `refreshTypedView` when set. */
  typedViewFailure: Error | undefined;
  /** Method calls that change state, in order: `createRun full`, `writePage 2 1`, `finishRun 2 failed`… */
  readonly calls: string[] = [];

  async createRun(run: {
    resource: ResourceName;
    mode: RunMode;
    filter?: string | undefined;
  }): Promise<string> {
    const id = String(this.runs.size + 1);
    this.runs.set(id, {
      resource: run.resource,
      mode: run.mode,
      filter: run.filter,
      outcome: 'running',
      pages: 0,
      records: 0,
      rejected: 0,
      deleted: 0,
      maxId: null,
    });
    this.calls.push(`createRun ${id} ${run.mode}`);
    return id;
  }

  /** A run that ended before this test's: its rows are already stored. */
  async seedRun(
    resource: ResourceName,
    mode: RunMode,
    outcome: MemoryRun['outcome'],
    records: MemoryRecord[] = [],
  ): Promise<string> {
    const id = await this.createRun({ resource, mode });
    for (const record of records) this.#rowsOf(resource).set(String(record.id), record);
    const maxId = records.reduce<string | null>((max, r) => higher(max, String(r.id)), null);
    Object.assign(this.#run(id), { outcome, maxId, records: records.length });
    this.calls.length = 0;
    return id;
  }

  async runOutcome(runId: string): Promise<MemoryRun['outcome'] | undefined> {
    return this.runs.get(runId)?.outcome;
  }

  async completedRuns(
    resource: ResourceName,
    updated?: { lookbackMs: number; filterPrefix: string },
  ): Promise<CompletedRuns> {
    const runs = [...this.runs.values()].filter((r) => r.resource === resource);
    const succeeded = runs.filter((r) => r.outcome === 'succeeded');
    const last = runs.at(-1);
    return {
      fullRunDone: succeeded.some((r) => r.mode === 'full'),
      highestId: succeeded.reduce<string | null>((max, r) => higher(max, r.maxId), null),
      lastRun: last && { outcome: last.outcome, error: last.error ?? null },
      updatedSince: updated ? this.updatedSinceAnswer : undefined,
    };
  }

  preparePage(_resource: ResourceName, page: Page): PreparedPage {
    const rejected = page.records.flatMap((record, index) =>
      Number.isInteger((record as Partial<MemoryRecord>).id) ? [] : [{ index, reason: 'no id' }],
    );
    return { rejected };
  }

  async writePage(
    resource: ResourceName,
    runId: string,
    page: Page,
    prepared?: PreparedPage,
    options: PageWriteOptions = {},
  ): Promise<PageWriteResult> {
    // Commits after the page before it, and not at all when that one failed.
    await options.earlier?.committed;
    const { rejected } = prepared ?? this.preparePage(resource, page);
    const skipped = new Set(rejected.map((r) => r.index));
    const good = page.records.filter((_, index) => !skipped.has(index)) as MemoryRecord[];
    const rows = this.#rowsOf(resource);
    // An incremental run leaves alone the records stored as they are, live.
    const kept = (r: MemoryRecord) =>
      options.skipUnchanged === true &&
      !this.deleted.get(resource)?.has(String(r.id)) &&
      isDeepStrictEqual(rows.get(String(r.id)), r);
    const written = good.filter((r) => !kept(r));
    const ids = good.map((r) => String(r.id));
    for (const record of written) rows.set(String(record.id), record);
    const seen = this.lastSeen.get(resource) ?? new Map<string, string>();
    this.lastSeen.set(resource, seen);
    for (const record of written) seen.set(String(record.id), runId);
    for (const record of written) this.deleted.get(resource)?.delete(String(record.id));
    const maxId = ids.reduce<string | null>(higher, null);
    const minId = ids.reduce<string | null>(
      (min, id) => (min === null || BigInt(id) < BigInt(min) ? id : min),
      null,
    );
    const run = this.#run(runId);
    run.pages += 1;
    run.records += written.length;
    run.rejected += rejected.length;
    run.maxId = higher(run.maxId, maxId);
    if (options.apiClock) run.apiClock ??= options.apiClock;
    this.calls.push(`writePage ${runId} ${page.number}`);
    const unchanged = good.length - written.length;
    return {
      written: written.length,
      rejected: [...rejected],
      maxId,
      minId,
      ...(options.skipUnchanged ? { unchanged } : {}),
    };
  }

  async resetProgress(runId: string): Promise<void> {
    Object.assign(this.#run(runId), { pages: 0, records: 0, rejected: 0 });
    this.calls.push(`resetProgress ${runId}`);
  }

  /** Marks deleted the live rows the run did not write, as the warehouse's sweep does. */
  async sweepDeletions(resource: ResourceName, runId: string): Promise<number> {
    this.calls.push(`sweepDeletions ${runId}`);
    const deleted = this.deleted.get(resource) ?? new Set<string>();
    this.deleted.set(resource, deleted);
    const seen = this.lastSeen.get(resource);
    let marked = 0;
    for (const id of this.#rowsOf(resource).keys()) {
      if (deleted.has(id) || seen?.get(id) === runId) continue;
      deleted.add(id);
      marked += 1;
    }
    this.#run(runId).deleted += marked;
    return marked;
  }

  async refreshTypedView(
    _resource: ResourceName,
    runId: string,
  ): Promise<TypedViewRefresh | undefined> {
    this.calls.push(`refreshTypedView ${runId}`);
    if (this.typedViewFailure) throw this.typedViewFailure;
    return { added: [], retyped: [] };
  }

  async finishRun(runId: string, outcome: { outcome: 'failed'; error: string }): Promise<void> {
    Object.assign(this.#run(runId), outcome);
    this.calls.push(`finishRun ${runId} ${outcome.outcome}`);
  }

  async completeRun(_resource: ResourceName, runId: string): Promise<RunTotals> {
    const run = this.#run(runId);
    if (run.outcome === 'running') run.outcome = 'succeeded';
    this.calls.push(`finishRun ${runId} succeeded`);
    const { pages, records, rejected, deleted } = run;
    return { pages, records, rejected, deleted };
  }

  #run(runId: string): MemoryRun {
    const run = this.runs.get(runId);
    if (!run) throw new Error(`no run ${runId}`);
    return run;
  }

  #rowsOf(resource: ResourceName): Map<string, MemoryRecord> {
    let rows = this.rows.get(resource);
    if (!rows) {
      rows = new Map();
      this.rows.set(resource, rows);
    }
    return rows;
  }
}

/** Checkpoints in memory, one per resource, as Redis keeps them. */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #saved = new Map<ResourceName, Checkpoint>();
  /** Every checkpoint saved, in order. */
  readonly saves: Checkpoint[] = [];

  async load(resource: ResourceName): Promise<Checkpoint | undefined> {
    return this.#saved.get(resource);
  }

  async save(checkpoint: Checkpoint): Promise<void> {
    this.#saved.set(checkpoint.resource, checkpoint);
    this.saves.push(checkpoint);
  }

  async clear(resource: ResourceName): Promise<void> {
    this.#saved.delete(resource);
  }
}

/** Records with ids `from` down to `to`, newest first, as the API lists them. */
export function recordsFrom(from: number, to: number): MemoryRecord[] {
  const records: MemoryRecord[] = [];
  for (let id = from; id >= to; id -= 1) records.push({ id, name: `record ${id}` });
  return records;
}
