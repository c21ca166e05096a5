import { RunInterruptedError } from '../errors.js';
import type { Logger } from '../logger.js';
import type {
  ApiClockReading,
  Checkpoint,
  CheckpointStore,
  Page,
  PageSource,
  PageWriteResult,
  PreparedPage,
  ReadPlan,
  ResourceName,
  RunMode,
  RunStore,
} from './ports.js';
import { atFirstPageOfWalk, atWalkStart, walkIndexOf } from './walks.js';

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

export interface RunProgress {
  resource: ResourceName;
  runId: string;
  mode: RunMode;
  /** Pages of the run committed so far. */
  pages: number;
  /** Records written by this process (a resumed run counts from its resumption). */
  records: number;
}

/** What a walk reads with and reports to (a part of runResource's options). */
export interface WalkOptions {
  source: PageSource;
  store: RunStore;
  checkpoints: CheckpointStore;
  signal?: AbortSignal | undefined;
  metrics?: RunMetrics;
  onProgress?: (progress: RunProgress) => void;
}

/** The run in hand: its checkpoint, moved on page by page, and the records this process wrote. */
export interface RunState {
  checkpoint: Checkpoint;
  records: number;
}

/** A page whose write has started, in page order. */
interface InFlight {
  page: Page;
  /**
   * Settles once the page has committed and its checkpoint is saved (what
   * that means for the walk), after every earlier page's; rejects when its
   * write, or an earlier page's, failed.
   */
  done: Promise<AfterPage>;
  /**
   * The next page's turn to commit: resolved with `done`, rejected when this
   * page failed or the run was aborted meanwhile (the next page then commits
   * nothing).
   */
  turn: Promise<void>;
}

/** What the commit of a page means for the walk: it goes on, or its walk (or the run's last walk) ended there. */
type AfterPage = 'next page' | 'walk finished' | 'run read';

/**
 * Reads the walk the run's checkpoint is in, from its `next` URL on, moving
 * the checkpoint on after each committed page. True when the run has read its
 * last walk; false when the checkpoint is at the next walk's first page.
 *
 * A walk that reads every page (no stop by id) is pipelined: the next page is
 * fetched while this one is written, and its write starts at once; it
 * commits only once this one has committed and been checkpointed (the store
 * may write its rows meanwhile: see PageWriteOptions.earlier). So a page's
 * checkpoint is saved as soon as it and every page before it have
 * committed, and never before. On an abort the run stops after the page in
 * hand, as an unpipelined walk does: the page written beside it commits
 * nothing. On an error, the writes in flight are settled (each page
 * committed is checkpointed, in order) before the walk ends.
 */
export async function readWalk(
  plan: ReadPlan,
  options: WalkOptions,
  run: RunState,
  logger: Logger,
): Promise<boolean> {
  const { resource } = plan;
  const { source, store, signal } = options;
  // A full run reads every page, so the next one is fetched (and written)
  // while this one is written; an incremental run stops early and would
  // waste that request.
  const pipelined = run.checkpoint.stopAtId === null;
  // Each page is validated as soon as it arrives: a prefetched page while
  // the one before it is still being written.
  const prepared = new WeakMap<Page, PreparedPage>();
  const inFlight: InFlight[] = [];
  // Every write not yet settled, whatever became of the pages before it.
  const writing = new Set<Promise<unknown>>();
  const start = (page: Page, before: InFlight | undefined): InFlight => {
    // The run's first response: its API clock is recorded with the page.
    const apiClock = page.number === 1 ? page.apiClock : undefined;
    if (apiClock) warnOfClockSkew(plan.maxClockSkewMs, apiClock, logger);
    const write = store.writePage(resource, run.checkpoint.runId, page, prepared.get(page), {
      // An incremental run rewrites no record stored as it is; a full run
      // marks every row it sees, for its sweep.
      skipUnchanged: run.checkpoint.mode === 'incremental',
      apiClock,
      earlier: before && { committed: before.turn, prepared: prepared.get(before.page) },
    });
    // In page order, whatever the store does: the checkpoint moves on after
    // this page only once the page before it has moved it.
    const done = Promise.all([write, before?.done]).then(([result]) =>
      afterCommit(plan, options, run, logger, page, result),
    );
    const turn = done.then(() => {
      if (signal?.aborted) throw signal.reason;
    });
    const settled: Promise<boolean> = write.then(
      () => writing.delete(settled),
      () => writing.delete(settled),
    );
    writing.add(settled);
    // Awaited in page order below; a failure is the run's once its turn comes.
    done.catch(() => {});
    turn.catch(() => {});
    return { page, done, turn };
  };
  let interrupted = false;
  try {
    for await (const page of source.pages(run.checkpoint.nextUrl, run.checkpoint.pagesDone + 1, {
      signal,
      prefetch: pipelined,
      // Past a walk's first page the start URL is a checkpointed cursor, which may go stale.
      fromCheckpoint: !atFirstPageOfWalk(run.checkpoint, plan),
      prepare: (p) => prepared.set(p, store.preparePage(resource, p)),
      requestLog: { resource, runId: run.checkpoint.runId },
    })) {
      inFlight.push(start(page, inFlight.at(-1)));
      if (pipelined && inFlight.length < 2) continue;
      const after = await (inFlight.shift() as InFlight).done;
      if (after === 'run read') return true;
      interrupted = signal?.aborted === true;
      if (interrupted) break;
      if (after === 'walk finished') return false;
    }
    while (inFlight.length > 0 && !interrupted) {
      const after = await (inFlight.shift() as InFlight).done;
      if (after === 'run read') return true;
      interrupted = signal?.aborted === true;
      if (!interrupted && after === 'walk finished') return false;
    }
  } finally {
    // No write of the run outlives its walk: an error or an abort waits for
    // those in flight (each that commits is checkpointed in order), and for
    // a write whose page before it failed (it commits nothing).
    await Promise.allSettled(inFlight.map((f) => f.done));
    await Promise.allSettled([...writing]);
  }
  if (interrupted) {
    const { runId, pagesDone } = run.checkpoint;
    throw new RunInterruptedError(`run ${runId} of ${resource} stopped after page ${pagesDone}`);
  }
  return true;
}

/** After a page's commit: its log line and counts, then the checkpoint moved past it. */
async function afterCommit(
  plan: ReadPlan,
  options: WalkOptions,
  run: RunState,
  logger: Logger,
  page: Page,
  result: PageWriteResult,
): Promise<AfterPage> {
  const { resource } = plan;
  const { checkpoints, metrics } = options;
  const { checkpoint } = run;
  for (const r of result.rejected) {
    logger.warn({ page: page.number, index: r.index, reason: r.reason }, 'record rejected');
  }
  metrics?.onPage?.(resource, result.written, result.rejected.length);
  run.records += result.written;
  const reachedStop =
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
  const walk = walkIndexOf(checkpoint, plan);
  if (next === undefined && walk + 1 >= plan.walks.length) {
    run.checkpoint = { ...checkpoint, pagesDone: page.number, updatedAt: new Date().toISOString() };
    return 'run read';
  }
  run.checkpoint =
    next === undefined
      ? { ...atWalkStart(checkpoint, walk + 1, plan), pagesDone: page.number }
      : {
          ...checkpoint,
          nextUrl: next,
          pagesDone: page.number,
          updatedAt: new Date().toISOString(),
        };
  await checkpoints.save(run.checkpoint);
  const { runId, mode } = run.checkpoint;
  options.onProgress?.({ resource, runId, mode, pages: page.number, records: run.records });
  if (next === undefined) {
    logger.info(
      { nextWalk: run.checkpoint.walk, query: run.checkpoint.walkQuery },
      'walk finished; reading the next walk',
    );
    return 'walk finished';
  }
  return 'next page';
}

/** How far a skew may pass the limit before it counts: the `Date` header names a whole second. */
const DATE_RESOLUTION_MS = 1000;

/**
 * Warns when the API's clock at the run's first response (recorded with the
 * page: the next incremental run's updated filter starts from it) is further
 * from this worker's than the lookback.
 */
function warnOfClockSkew(
  limit: number | undefined,
  reading: ApiClockReading,
  logger: Logger,
): void {
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
