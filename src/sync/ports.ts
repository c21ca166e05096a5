import type { Page } from '../api/fetch-pages.js';
import type { ResourceName } from '../config.js';
import type { RunMode } from '../warehouse/schema.js';
import type { PageWriteResult } from '../warehouse/write-page.js';

/**
 * A run's state after its last committed page, written after each commit.
 * `nextUrl` is the API's `next` link exactly as received; it is never parsed.
 */
export interface Checkpoint {
  runId: string;
  resource: ResourceName;
  mode: RunMode;
  /** The URL of the next page to read (the first page's URL before any commit). */
  nextUrl: string;
  /** Pages committed so far. */
  pagesDone: number;
  /** Incremental runs stop after the page reaching an id at or below this one. */
  stopAtId: string | null;
  updatedAt: string;
}

/** Where checkpoints live (Redis in production). */
export interface CheckpointStore {
  load(resource: ResourceName): Promise<Checkpoint | undefined>;
  save(checkpoint: Checkpoint): Promise<void>;
  clear(resource: ResourceName): Promise<void>;
}

/** Pages of a resource from a URL on (the API client in production). */
export interface PageSource {
  firstPageUrl(resource: ResourceName): string;
  /** The status filter of a resource's list, if any (a filtered full run marks no deletions). */
  filterOf(resource: ResourceName): string | undefined;
  /** With `prefetch`, the next page is fetched while the current one is written. */
  pages(
    startUrl: string,
    startPage: number,
    options?: { signal?: AbortSignal | undefined; prefetch?: boolean },
  ): AsyncIterable<Page>;
}

/** What a run needs of the warehouse. */
export interface RunStore {
  createRun(run: {
    resource: ResourceName;
    mode: RunMode;
    filter?: string | undefined;
  }): Promise<string>;
  /** Outcome of a run, or undefined if the row is gone. */
  runOutcome(runId: string): Promise<'running' | 'succeeded' | 'failed' | undefined>;
  /** Has the resource ever completed a full run? */
  hasCompletedFullRun(resource: ResourceName): Promise<boolean>;
  /** Highest id any completed run of the resource saw. */
  highestCompletedId(resource: ResourceName): Promise<string | null>;
  writePage(resource: ResourceName, runId: string, page: Page): Promise<PageWriteResult>;
  /** Clears a run's counts when it restarts from its first page. */
  resetProgress(runId: string): Promise<void>;
  /** Marks what a completed full run did not see; throws when the deletion guard trips. */
  sweepDeletions(runId: string, options?: { allowMassDelete?: boolean }): Promise<number>;
  finishRun(
    runId: string,
    outcome: { outcome: 'succeeded'; deleted: number } | { outcome: 'failed'; error: string },
  ): Promise<void>;
  runTotals(runId: string): Promise<{ pages: number; records: number; rejected: number }>;
}
