import type { Kysely } from 'kysely';
import type { Page } from '../api/fetch-pages.js';
import type { ResourceName } from '../config.js';
import type { RunStore } from '../sync/ports.js';
import type { Database, RunMode } from './schema.js';
import {
  createRun,
  finishRun,
  getRun,
  hasCompletedFullRun,
  highestCompletedId,
  resetRunProgress,
  sweepDeletions,
} from './sync-runs.js';
import { type PageWriteResult, writePage } from './write-page.js';

/** The sync engine's view of the warehouse, over Kysely. */
export class KyselyRunStore implements RunStore {
  readonly #db: Kysely<Database>;
  readonly #recordsKey: string | undefined;

  constructor(db: Kysely<Database>, options: { recordsKey?: string | undefined } = {}) {
    this.#db = db;
    this.#recordsKey = options.recordsKey;
  }

  createRun(run: {
    resource: ResourceName;
    mode: RunMode;
    filter?: string | undefined;
  }): Promise<string> {
    return createRun(this.#db, run);
  }

  async runOutcome(runId: string): Promise<'running' | 'succeeded' | 'failed' | undefined> {
    return (await getRun(this.#db, runId))?.outcome;
  }

  hasCompletedFullRun(resource: ResourceName): Promise<boolean> {
    return hasCompletedFullRun(this.#db, resource);
  }

  highestCompletedId(resource: ResourceName): Promise<string | null> {
    return highestCompletedId(this.#db, resource);
  }

  writePage(resource: ResourceName, runId: string, page: Page): Promise<PageWriteResult> {
    return writePage(this.#db, {
      resource,
      runId,
      pageNumber: page.number,
      body: page.body,
      records: page.records,
      recordsKey: this.#recordsKey,
    });
  }

  resetProgress(runId: string): Promise<void> {
    return resetRunProgress(this.#db, runId);
  }

  sweepDeletions(runId: string): Promise<number> {
    return sweepDeletions(this.#db, runId);
  }

  finishRun(
    runId: string,
    outcome: { outcome: 'succeeded'; deleted: number } | { outcome: 'failed'; error: string },
  ): Promise<void> {
    return finishRun(this.#db, runId, outcome);
  }

  async runTotals(runId: string): Promise<{ pages: number; records: number; rejected: number }> {
    const run = await getRun(this.#db, runId);
    return {
      pages: run?.pages ?? 0,
      records: Number(run?.records ?? 0),
      rejected: Number(run?.rejected ?? 0),
    };
  }
}
