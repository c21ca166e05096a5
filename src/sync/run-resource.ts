import { CursorRejectedError, RunInterruptedError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isNotPermitted, NotPermittedSkip, scopeOfRun } from './not-permitted.js';
import type {
  ApiClockReading,
  Checkpoint,
  CheckpointStore,
  Page,
  PageSource,
  PreparedPage,
  ResourceName,
  RunMode,
  RunStore,
} from './ports.js';
import { atFirstPageOfWalk, atWalkStart, walkIndexOf, walksOf } from './walks.js';

/** What the caller asks for: a full run, or whatever is due (incremental once a full run has completed). */
export type RequestedMode = 'full' | 'auto';

/** Counters a run reports to; all optional. */
export interface RunMetrics {
  onPage?(resource: ResourceName, records: number, rejected: number): void;
  onRunFinished?(
    resource: ResourceName,
    mode: RunMode,
    outcome: 'succeeded' | 'failed',
    seconds: number,
  ): void;
}

/** Options of {@link runResource}. */
export interface RunResourceOptions {
  resource: ResourceName;
  requested: RequestedMode;
  source: PageSource;
  store: RunStore;
  checkpoints: CheckpointStore;
  logger: Logger;
  /** Stops the run after the page in hand is committed and checkpointed. */
  signal?: AbortSignal | undefined;
  metrics?: RunMetrics;
  /** Called after each committed page (progress output). */
  onProgress?: (progress: RunProgress) => void;
  /**
   * `HIRESYNC_UPDATED_FILTER` and `HIRESYNC_UPDATED_LOOKBACK`: the filter
   * template (holding `{since}`) that incremental runs send on their first
   * request. Unset: incremental runs stop by id.
   */
  updatedFilter?: { template: string; lookbackMs: number } | undefined;
  /**
   * `HIRESYNC_EXTRA_WALKS` of this resource: the queries (`active=false`) of
   * the walks read after the default one, in order, as part of the same run.
   * Each is sent beside `per_page` (and the updated filter) on its walk's
   * first request; an incremental run stops each walk by id on its own.
   */
  extraWalks?: readonly string[] | undefined;
  /**
   * `HIRESYNC_UPDATED_LOOKBACK`: a skew between the API's clock (its `Date`)
   * and this worker's larger than this (beyond the header's one-second
   * resolution) is logged as a warning at the run's first response.
   * Undefined: not checked.
   */
  maxClockSkewMs?: number | undefined;
  /**
   * The operator confirmed that this full run may soft-delete more than
   * HIRESYNC_MAX_DELETE_FRACTION of the live rows (`--allow-mass-delete`).
   */
  allowMassDelete?: boolean;
  /**
   * A scheduled incremental run: when the resource's last run was refused
   * 403 (not permitted, see not-permitted.ts), no run starts, and
   * NotPermittedSkip is thrown: a 403 answers the same until the scope is
   * granted, so only a full run tries again. Read in the statement that
   * plans the run. A checkpoint pending is resumed all the same.
   */
  skipNotPermitted?: boolean;
}

export interface RunProgress {
  resource: ResourceName;
  runId: string;
  mode: RunMode;
  /** Pages of the run committed so far. */
  pages: number;
  /** Records written by this process (a resumed run counts from its resumption). */
  records: number;
}

/** What a completed run did. */
export interface RunSummary {
  runId: string;
  resource: ResourceName;
  mode: RunMode;
  resumed: boolean;
  pages: number;
  records: number;
  rejected: number;
  deleted: number;
  seconds: number;
}

function now(): string {
  return new Date().toISOString();
}

/** Decides whether to resume a checkpoint, and otherwise which mode a new run takes. */
async function planRun(
  options: RunResourceOptions,
): Promise<{ checkpoint: Checkpoint; resumed: boolean }> {
  const { resource, requested, store, checkpoints, source, logger } = options;
  const pending = await checkpoints.load(resource);
  if (pending) {
    const outcome = await store.runOutcome(pending.runId);
    if (outcome !== 'running') {
      // The run finished but its checkpoint outlived it (a crash between the two writes).
      await checkpoints.clear(resource);
    } else if (pending.mode === 'incremental' && requested === 'full') {
      // A full run covers everything an interrupted incremental run would have read.
      await store.finishRun(pending.runId, {
        outcome: 'failed',
        error: 'superseded by a full run',
      });
      await checkpoints.clear(resource);
    } else {
      logger.info(
        {
          runId: pending.runId,
          page: pending.pagesDone + 1,
          mode: pending.mode,
          walk: pending.walk ?? 0,
        },
        'resuming run from checkpoint',
      );
      return { checkpoint: pending, resumed: true };
    }
  }
  const template = options.updatedFilter?.template;
  // One statement: full run done, stop id, last run, where the updated filter starts.
  const completed = await store.completedRuns(
    resource,
    options.updatedFilter && {
      lookbackMs: options.updatedFilter.lookbackMs,
      filterPrefix: options.updatedFilter.template.split('{since}')[0] ?? '',
    },
  );
  if (options.skipNotPermitted && isNotPermitted(completed.lastRun)) {
    throw new NotPermittedSkip(scopeOfRun(resource, completed.lastRun?.error ?? null));
  }
  const mode: RunMode = requested === 'full' || !completed.fullRunDone ? 'full' : 'incremental';
  let stopAtId = mode === 'incremental' ? completed.highestId : null;
  let filter = source.filterOf(resource);
  let updated: string | undefined;
  if (mode === 'incremental' && template !== undefined) {
    // Updates too: the records changed since the last successful run began
    // (less the lookback), every page the API returns; no stop by id.
    const since = completed.updatedSince;
    if (since !== undefined) {
      updated = template.replaceAll('{since}', encodeURIComponent(since));
      filter = filter === undefined ? updated : `${filter}&${updated}`;
      stopAtId = null;
    }
  }
  const runId = await store.createRun({ resource, mode, filter });
  const firstUrl = source.firstPageUrl(resource, updated);
  const checkpoint: Checkpoint = {
    runId,
    resource,
    mode,
    nextUrl: firstUrl,
    firstUrl,
    walk: 0,
    ...(updated === undefined ? {} : { updatedQuery: updated }),
    ...(options.allowMassDelete ? { allowMassDelete: true } : {}),
    pagesDone: 0,
    stopAtId,
    updatedAt: now(),
  };
  // Saved before the first page, so a crash at any moment resumes this run id.
  await checkpoints.save(checkpoint);
  logger.info({ runId, mode, stopAtId, filter }, 'run started');
  return { checkpoint, resumed: false };
}

function isAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return (
    signal?.aborted === true && (error === signal.reason || (error as Error)?.name === 'AbortError')
  );
}

/**
 * One run of one resource, to its end: pages are read from the checkpoint on
 * (or the first page), each is written in one transaction, and only after the
 * commit is the next URL checkpointed. The default walk is read first, then
 * each extra walk (`extraWalks`), all in the same run: pages are counted
 * across walks, and the checkpoint says which walk its `next` URL belongs to.
 * A full run then marks deletions: ids that no walk returned.
 *
 * A stale checkpointed cursor (422) restarts the run from its first page once.
 * On abort the run stops after its last checkpoint and throws
 * RunInterruptedError; any other error leaves the checkpoint in place for the
 * caller to retry or to fail the run.
 */
export async function runResource(options: RunResourceOptions): Promise<RunSummary> {
  const started = performance.now();
  const { resource, source, store, checkpoints, signal, metrics } = options;
  let { checkpoint, resumed } = await planRun(options);
  const logger = options.logger.child({ runId: checkpoint.runId, mode: checkpoint.mode });
  let restarted = false;
  let recordsThisTime = 0;
  const walks = walksOf(options.extraWalks);

  for (;;) {
    try {
      let reachedStop = false;
      // The walk ended and the checkpoint is at the next walk's first page.
      let nextWalk = false;
      // A full run reads every page, so the next one is fetched while this one
      // is written; an incremental run stops early and would waste that request.
      const prefetch = checkpoint.stopAtId === null;
      // Each page is validated as soon as it arrives: a prefetched page while
      // the one before it is still being written.
      const prepared = new WeakMap<Page, PreparedPage>();
      for await (const page of source.pages(checkpoint.nextUrl, checkpoint.pagesDone + 1, {
        signal,
        prefetch,
        // Past a walk's first page the start URL is a checkpointed cursor, which may go stale.
        fromCheckpoint: !atFirstPageOfWalk(checkpoint, walks, source),
        prepare: (p) => prepared.set(p, store.preparePage(resource, p)),
        requestLog: { resource, runId: checkpoint.runId },
      })) {
        // The run's first response: its API clock is recorded with the page.
        const apiClock = page.number === 1 ? page.apiClock : undefined;
        if (apiClock) warnOfClockSkew(options, apiClock, logger);
        const result = await store.writePage(resource, checkpoint.runId, page, prepared.get(page), {
          // An incremental run rewrites no record stored as it is; a full run
          // marks every row it sees, for its sweep.
          skipUnchanged: checkpoint.mode === 'incremental',
          apiClock,
        });
        for (const r of result.rejected) {
          logger.warn({ page: page.number, index: r.index, reason: r.reason }, 'record rejected');
        }
        metrics?.onPage?.(resource, result.written, result.rejected.length);
        recordsThisTime += result.written;
        reachedStop =
          checkpoint.stopAtId !== null &&
          result.minId !== null &&
          BigInt(result.minId) <= BigInt(checkpoint.stopAtId);
        logger.info(
          {
            page: page.number,
            records: result.written,
            rejected: result.rejected.length,
            ...(result.unchanged === undefined ? {} : { unchanged: result.unchanged }),
          },
          'page committed',
        );
        // A walk ends at its last page, or (incremental) at the page reaching the stop id.
        const next = reachedStop ? undefined : page.nextUrl;
        const walkEnded = next === undefined;
        const walk = walkIndexOf(checkpoint, walks);
        if (walkEnded && walk + 1 >= walks.length) {
          checkpoint = { ...checkpoint, pagesDone: page.number, updatedAt: now() };
          break;
        }
        checkpoint = walkEnded
          ? { ...atWalkStart(checkpoint, walk + 1, walks, source), pagesDone: page.number }
          : { ...checkpoint, nextUrl: next, pagesDone: page.number, updatedAt: now() };
        await checkpoints.save(checkpoint);
        options.onProgress?.({
          resource,
          runId: checkpoint.runId,
          mode: checkpoint.mode,
          pages: page.number,
          records: recordsThisTime,
        });
        if (signal?.aborted)
          throw new RunInterruptedError(
            `run ${checkpoint.runId} of ${resource} stopped after page ${page.number}`,
          );
        if (walkEnded) {
          logger.info(
            { nextWalk: checkpoint.walk, query: checkpoint.walkQuery },
            'walk finished; reading the next walk',
          );
          nextWalk = true;
          break;
        }
      }
      if (nextWalk) continue;
      break;
    } catch (error) {
      if (error instanceof RunInterruptedError) throw error;
      if (isAbort(error, signal)) {
        throw new RunInterruptedError(
          `run ${checkpoint.runId} of ${resource} stopped after page ${checkpoint.pagesDone}`,
          { cause: error },
        );
      }
      if (error instanceof CursorRejectedError && checkpoint.pagesDone > 0 && !restarted) {
        logger.warn(
          { err: error, page: checkpoint.pagesDone + 1 },
          'checkpointed cursor rejected by the API; restarting the run from its first page',
        );
        restarted = true;
        await store.resetProgress(checkpoint.runId);
        // The whole run again, from its default walk's first page.
        checkpoint = {
          ...atWalkStart(
            checkpoint,
            0,
            walks,
            source,
            checkpoint.firstUrl ?? source.firstPageUrl(resource, checkpoint.updatedQuery),
          ),
          pagesDone: 0,
        };
        await checkpoints.save(checkpoint);
        continue;
      }
      throw error;
    }
  }

  if (checkpoint.mode === 'full') {
    // The sweep counts what it marks in its own transaction (sync_runs.deleted).
    await store.sweepDeletions(resource, checkpoint.runId, {
      // Confirmed for this run when it started, or by the job resuming it.
      allowMassDelete: options.allowMassDelete === true || checkpoint.allowMassDelete === true,
    });
  }
  if (checkpoint.mode === 'full') await refreshTypedView(store, resource, checkpoint.runId, logger);
  const totals = await store.completeRun(resource, checkpoint.runId);
  await checkpoints.clear(resource);
  const seconds = (performance.now() - started) / 1000;
  metrics?.onRunFinished?.(resource, checkpoint.mode, 'succeeded', seconds);
  logger.info({ ...totals, seconds }, 'run succeeded');
  return {
    runId: checkpoint.runId,
    resource,
    mode: checkpoint.mode,
    resumed,
    ...totals,
    seconds,
  };
}

/** How far a skew may pass the limit before it counts: the `Date` header names a whole second. */
const DATE_RESOLUTION_MS = 1000;

/**
 * Warns when the API's clock at the run's first response (recorded with the
 * page: the next incremental run's updated filter starts from it) is further
 * from this worker's than the lookback.
 */
function warnOfClockSkew(
  options: RunResourceOptions,
  reading: ApiClockReading,
  logger: Logger,
): void {
  const limit = options.maxClockSkewMs;
  if (limit === undefined || Math.abs(reading.skewMs) <= limit + DATE_RESOLUTION_MS) return;
  logger.warn(
    {
      apiDate: reading.date,
      skewSeconds: Math.round(reading.skewMs / 1000),
      lookbackSeconds: limit / 1000,
    },
    "the API's clock and this worker's differ by more than HIRESYNC_UPDATED_LOOKBACK; the updated filter starts from the API's clock (check the worker's time: NTP)",
  );
}

/**
 * Brings the resource's typed view up to date at the end of a full run,
 * logging what changed. Never fails the run: the data is stored, and the
 * next full run tries again.
 */
async function refreshTypedView(
  store: RunStore,
  resource: ResourceName,
  runId: string,
  logger: Logger,
): Promise<void> {
  try {
    const change = await store.refreshTypedView(resource, runId);
    if (!change) return;
    if (change.added.length > 0 || change.retyped.length > 0) {
      logger.info({ added: change.added, retyped: change.retyped }, 'typed view gained columns');
    }
    if (change.renamed && change.renamed.length > 0) {
      logger.info({ renamed: change.renamed }, 'typed view columns renamed under the naming rule');
    }
    if (change.warning) logger.warn({ reason: change.warning }, 'typed view not fully rebuilt');
  } catch (error) {
    logger.error(
      { err: error },
      'typed view could not be refreshed; the run succeeded, the next full run tries again',
    );
  }
}
