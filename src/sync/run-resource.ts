import { CursorRejectedError, RunInterruptedError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isNotPermitted, NotPermittedSkip, scopeOfRun } from './not-permitted.js';
import type {
  Checkpoint,
  CheckpointStore,
  PageSource,
  ReadPlan,
  ResourceName,
  RunMode,
  RunStore,
} from './ports.js';
import { type RunMetrics, type RunProgress, type RunState, readWalk } from './read-walk.js';
import { atWalkStart, walkFirstUrl } from './walks.js';

export type { RunMetrics, RunProgress } from './read-walk.js';

/** What the caller asks for: a full run, or whatever is due (incremental once a full run has completed). */
export type RequestedMode = 'full' | 'auto';

/** Options of {@link runResource}: what runs the read, and how this run was asked for. */
export interface RunResourceOptions {
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
async function openRun(
  plan: ReadPlan,
  options: RunResourceOptions,
): Promise<{ checkpoint: Checkpoint; resumed: boolean }> {
  const { resource, updated: updatedFilter } = plan;
  const { requested, store, checkpoints, logger } = options;
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
  // One statement: full run done, stop id, last run, where the updated filter starts.
  const completed = await store.completedRuns(
    resource,
    updatedFilter && {
      lookbackMs: updatedFilter.lookbackMs,
      filterPrefix: updatedFilter.template.split('{since}')[0] ?? '',
    },
  );
  if (options.skipNotPermitted && isNotPermitted(completed.lastRun)) {
    throw new NotPermittedSkip(scopeOfRun(resource, completed.lastRun?.error ?? null));
  }
  const mode: RunMode =
    requested === 'full' || !completed.fullRunDone || plan.everyRunFull === true
      ? 'full'
      : 'incremental';
  let stopAtId = mode === 'incremental' ? completed.highestId : null;
  let filter = plan.filter;
  let updated: string | undefined;
  if (mode === 'incremental' && updatedFilter !== undefined) {
    // Updates too: the records changed since the last successful run began
    // (less the lookback), every page the API returns; no stop by id.
    const since = completed.updatedSince;
    if (since !== undefined) {
      updated = updatedFilter.template.replaceAll('{since}', encodeURIComponent(since));
      filter = filter === undefined ? updated : `${filter}&${updated}`;
      stopAtId = null;
    }
  }
  const runId = await store.createRun({ resource, mode, filter });
  const firstUrl = walkFirstUrl(plan, 0, updated);
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
 * One run of one resource, to its end, as `plan` says (see planRead): pages
 * are read from the checkpoint on (or the first page), each is written in one
 * transaction, and only after the commit is the next URL checkpointed. The
 * default walk is read first, then each extra walk of the plan, all in the
 * same run: pages are counted across walks, and the checkpoint says which
 * walk its `next` URL belongs to. A full run then marks deletions: ids that
 * no walk returned.
 *
 * A stale checkpointed cursor (422) restarts the run from its first page once.
 * On abort the run stops after its last checkpoint and throws
 * RunInterruptedError; any other error leaves the checkpoint in place for the
 * caller to retry or to fail the run.
 */
export async function runResource(
  plan: ReadPlan,
  options: RunResourceOptions,
): Promise<RunSummary> {
  const started = performance.now();
  const { checkpoint, resumed } = await openRun(plan, options);
  const run: RunState = { checkpoint, records: 0 };
  const logger = options.logger.child({ runId: checkpoint.runId, mode: checkpoint.mode });
  let restarted = false;
  for (;;) {
    try {
      if (await readWalk(plan, options, run, logger)) break;
    } catch (error) {
      if (error instanceof RunInterruptedError) throw error;
      if (isAbort(error, options.signal)) {
        throw new RunInterruptedError(
          `run ${run.checkpoint.runId} of ${plan.resource} stopped after page ${run.checkpoint.pagesDone}`,
          { cause: error },
        );
      }
      if (!(error instanceof CursorRejectedError) || run.checkpoint.pagesDone === 0 || restarted)
        throw error;
      logger.warn(
        { err: error, page: run.checkpoint.pagesDone + 1 },
        'checkpointed cursor rejected by the API; restarting the run from its first page',
      );
      restarted = true;
      await options.store.resetProgress(run.checkpoint.runId);
      // The whole run again, from its default walk's first page.
      run.checkpoint = {
        ...atWalkStart(run.checkpoint, 0, plan, run.checkpoint.firstUrl),
        pagesDone: 0,
      };
      await options.checkpoints.save(run.checkpoint);
    }
  }
  return await finishRun(plan, options, run.checkpoint, logger, {
    resumed,
    seconds: () => (performance.now() - started) / 1000,
  });
}

/** A run that read its last page: the sweep and typed view of a full run, then the run completed and its checkpoint cleared. */
async function finishRun(
  plan: ReadPlan,
  options: RunResourceOptions,
  checkpoint: Checkpoint,
  logger: Logger,
  { resumed, seconds: elapsed }: { resumed: boolean; seconds: () => number },
): Promise<RunSummary> {
  const { resource } = plan;
  const { store, checkpoints, metrics } = options;
  const { runId, mode } = checkpoint;
  if (mode === 'full') {
    // The sweep counts what it marks in its own transaction (sync_runs.deleted).
    await store.sweepDeletions(resource, runId, {
      // Confirmed for this run when it started, or by the job resuming it.
      allowMassDelete: options.allowMassDelete === true || checkpoint.allowMassDelete === true,
    });
    await refreshTypedView(store, resource, runId, logger);
  }
  const totals = await store.completeRun(resource, runId);
  await checkpoints.clear(resource);
  const seconds = elapsed();
  metrics?.onRunFinished?.(resource, mode, 'succeeded', seconds);
  logger.info({ ...totals, seconds }, 'run succeeded');
  return { runId, resource, mode, resumed, ...totals, seconds };
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
