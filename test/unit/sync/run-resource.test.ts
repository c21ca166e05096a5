import { describe, expect, it } from 'vitest';
import { CursorRejectedError, RunInterruptedError } from '../../../src/errors.js';
import { type RunResourceOptions, runResource } from '../../../src/sync/run-resource.js';
import { captureLogger } from '../../support/capture-logger.js';
import {
  MemoryCheckpointStore,
  MemoryPageSource,
  MemoryRunStore,
  recordsFrom,
} from '../../support/in-memory-ports.js';

/** An API serving `jobs` ids 9..1, three a page, and an empty warehouse. */
function setup() {
  const source = new MemoryPageSource();
  const urls = source.serve('jobs', recordsFrom(9, 1), 3);
  const store = new MemoryRunStore();
  const checkpoints = new MemoryCheckpointStore();
  const log = captureLogger();
  const run = (options: Partial<RunResourceOptions> = {}) =>
    runResource({
      resource: 'jobs',
      requested: 'auto',
      source,
      store,
      checkpoints,
      logger: log.logger,
      ...options,
    });
  return { source, urls, store, checkpoints, log, run };
}

/** A checkpoint of a run of `jobs` that committed `pagesDone` pages and goes on at `nextUrl`. */
function checkpointOf(
  runId: string,
  mode: 'full' | 'incremental',
  nextUrl: string,
  pagesDone: number,
  firstUrl: string,
) {
  return {
    runId,
    resource: 'jobs',
    mode,
    nextUrl,
    firstUrl,
    pagesDone,
    stopAtId: null,
    updatedAt: new Date().toISOString(),
  } as const;
}

describe('runResource with in-memory ports', () => {
  it('reads every page of a first run as a full run, prefetching, then sweeps, refreshes the typed view and clears its checkpoint', async () => {
    const { source, urls, store, checkpoints, run } = setup();
    const summary = await run();
    expect(summary).toMatchObject({ mode: 'full', resumed: false, pages: 3, records: 9 });
    expect(source.requested).toEqual(urls);
    expect(source.walks.map((w) => w.prefetch)).toEqual([true]);
    expect(store.calls).toEqual([
      'createRun 1 full',
      'writePage 1 1',
      'writePage 1 2',
      'writePage 1 3',
      'sweepDeletions 1',
      'refreshTypedView 1',
      'finishRun 1 succeeded',
    ]);
    // Saved before the first page, then after each page but the last.
    expect(checkpoints.saves.map((c) => c.pagesDone)).toEqual([0, 1, 2]);
    expect(await checkpoints.load('jobs')).toBeUndefined();
  });

  it('resumes from a checkpoint: the same run id, from the checkpointed page on', async () => {
    const { source, urls, store, checkpoints, run } = setup();
    const runId = await store.seedRun('jobs', 'full', 'running');
    await checkpoints.save(checkpointOf(runId, 'full', urls[1] as string, 1, urls[0] as string));
    const summary = await run();
    expect(summary).toMatchObject({ runId, mode: 'full', resumed: true });
    expect(source.requested).toEqual(urls.slice(1));
    // The pages it wrote carry on the checkpoint's numbering.
    expect(store.calls.filter((c) => c.startsWith('writePage'))).toEqual([
      `writePage ${runId} 2`,
      `writePage ${runId} 3`,
    ]);
    expect(store.runs.get(runId)?.outcome).toBe('succeeded');
  });

  it('clears a checkpoint whose run has already finished and starts a new run', async () => {
    const { source, urls, store, checkpoints, run } = setup();
    const finished = await store.seedRun('jobs', 'full', 'succeeded', recordsFrom(5, 1));
    await checkpoints.save(checkpointOf(finished, 'full', urls[2] as string, 2, urls[0] as string));
    const summary = await run({ requested: 'full' });
    expect(summary.runId).not.toBe(finished);
    expect(summary.resumed).toBe(false);
    expect(source.requested).toEqual(urls);
  });

  it('fails an interrupted incremental run superseded by a full one, and starts the full run from the first page', async () => {
    const { source, urls, store, checkpoints, run } = setup();
    await store.seedRun('jobs', 'full', 'succeeded', recordsFrom(5, 1));
    const incremental = await store.seedRun('jobs', 'incremental', 'running');
    await checkpoints.save(
      checkpointOf(incremental, 'incremental', urls[1] as string, 1, urls[0] as string),
    );
    const summary = await run({ requested: 'full' });
    expect(store.runs.get(incremental)).toMatchObject({
      outcome: 'failed',
      error: 'superseded by a full run',
    });
    expect(summary).toMatchObject({ mode: 'full', resumed: false });
    expect(summary.runId).not.toBe(incremental);
    expect(source.requested).toEqual(urls);
  });

  it('resumes an interrupted incremental run when a schedule asks for whatever is due', async () => {
    const { source, urls, store, checkpoints, run } = setup();
    await store.seedRun('jobs', 'full', 'succeeded', recordsFrom(5, 1));
    const incremental = await store.seedRun('jobs', 'incremental', 'running');
    await checkpoints.save(
      checkpointOf(incremental, 'incremental', urls[1] as string, 1, urls[0] as string),
    );
    const summary = await run({ requested: 'auto' });
    expect(summary).toMatchObject({ runId: incremental, mode: 'incremental', resumed: true });
    expect(source.requested[0]).toBe(urls[1]);
  });

  it('restarts a run from its first page once when the API rejects its checkpointed cursor', async () => {
    const { source, urls, store, checkpoints, log, run } = setup();
    const runId = await store.seedRun('jobs', 'full', 'running');
    await checkpoints.save(checkpointOf(runId, 'full', urls[1] as string, 1, urls[0] as string));
    source.failNext(urls[1] as string, new CursorRejectedError(422, '/v3/jobs', 'stale', '{}'));
    const summary = await run();
    expect(summary).toMatchObject({ runId, resumed: true, pages: 3, records: 9 });
    expect(source.requested).toEqual([urls[1], ...urls]);
    expect(store.calls.slice(0, 2)).toEqual([`resetProgress ${runId}`, `writePage ${runId} 1`]);
    expect(log.text()).toContain('checkpointed cursor rejected by the API');
  });

  it('fails when the cursor is rejected again after the restart: a run restarts only once', async () => {
    const { source, urls, store, checkpoints, run } = setup();
    const runId = await store.seedRun('jobs', 'full', 'running');
    await checkpoints.save(checkpointOf(runId, 'full', urls[1] as string, 1, urls[0] as string));
    source.failNext(urls[1] as string, new CursorRejectedError(422, '/v3/jobs', 'stale', '{}'));
    source.failNext(urls[1] as string, new CursorRejectedError(422, '/v3/jobs', 'stale', '{}'));
    await expect(run()).rejects.toBeInstanceOf(CursorRejectedError);
    expect(store.calls.filter((c) => c.startsWith('resetProgress'))).toHaveLength(1);
    // The checkpoint stays for the queue to retry the run or fail it.
    expect(await checkpoints.load('jobs')).toMatchObject({ runId, pagesDone: 1 });
  });

  it('stops an incremental run by id after the page that reaches the highest id already stored, without prefetching', async () => {
    const { source, urls, store, run } = setup();
    // A completed full run stored ids up to 5: pages hold 9..7, 6..4, 3..1.
    await store.seedRun('jobs', 'full', 'succeeded', recordsFrom(5, 1));
    const summary = await run({ requested: 'auto' });
    expect(summary).toMatchObject({ mode: 'incremental', pages: 2, records: 6 });
    expect(source.requested).toEqual(urls.slice(0, 2));
    expect(source.walks.map((w) => w.prefetch)).toEqual([false]);
    // An incremental run marks no deletions and leaves the typed view alone.
    expect(store.calls).not.toContain(`sweepDeletions ${summary.runId}`);
    expect(store.calls).not.toContain(`refreshTypedView ${summary.runId}`);
  });

  it('sends the updated filter on an incremental run and reads every page instead of stopping by id', async () => {
    const { source, urls, store, run } = setup();
    await store.seedRun('jobs', 'full', 'succeeded', recordsFrom(5, 1));
    store.updatedSinceAnswer = '2026-03-01T10:00:00.000000Z';
    const filtered = `${urls[0]}&updated_after=2026-03-01T10%3A00%3A00.000000Z`;
    source.alias(filtered, urls[0] as string);
    const summary = await run({
      requested: 'auto',
      updatedFilter: { template: 'updated_after={since}', lookbackMs: 60_000 },
    });
    expect(summary).toMatchObject({ mode: 'incremental', pages: 3, records: 9 });
    expect(source.requested).toEqual([filtered, ...urls.slice(1)]);
    expect(store.runs.get(summary.runId)?.filter).toBe(
      'updated_after=2026-03-01T10%3A00%3A00.000000Z',
    );
  });

  it('stops by id when no earlier run gives the updated filter a start', async () => {
    const { source, urls, store, run } = setup();
    await store.seedRun('jobs', 'full', 'succeeded', recordsFrom(5, 1));
    store.updatedSinceAnswer = undefined;
    const summary = await run({
      requested: 'auto',
      updatedFilter: { template: 'updated_after={since}', lookbackMs: 60_000 },
    });
    expect(summary).toMatchObject({ mode: 'incremental', pages: 2 });
    expect(source.requested).toEqual(urls.slice(0, 2));
  });

  it('succeeds when the typed view cannot be refreshed, logging why', async () => {
    const { store, checkpoints, log, run } = setup();
    store.typedViewFailure = new Error('column type clash');
    const summary = await run({ requested: 'full' });
    expect(store.runs.get(summary.runId)?.outcome).toBe('succeeded');
    expect(await checkpoints.load('jobs')).toBeUndefined();
    expect(log.text()).toContain('typed view could not be refreshed');
  });

  it('stops after the page in hand when its signal is aborted, keeping the checkpoint for the next attempt', async () => {
    const { source, urls, store, checkpoints, run } = setup();
    const controller = new AbortController();
    const error = await run({
      requested: 'full',
      signal: controller.signal,
      onProgress: (progress) => {
        if (progress.pages === 1) controller.abort(new Error('shutdown'));
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunInterruptedError);
    const checkpoint = await checkpoints.load('jobs');
    expect(checkpoint).toMatchObject({ pagesDone: 1, nextUrl: urls[1] });
    expect(store.runs.get(checkpoint?.runId ?? '')?.outcome).toBe('running');
    // Only the page in hand was written; the prefetched one was not.
    expect(store.calls.filter((c) => c.startsWith('writePage'))).toHaveLength(1);
    expect(source.requested.length).toBeLessThanOrEqual(2);
  });

  it('counts rejected records apart from written ones', async () => {
    const source = new MemoryPageSource();
    source.serve('jobs', [{ id: 2 }, { id: 1.5 }, { id: 1 }], 3);
    const store = new MemoryRunStore();
    const summary = await runResource({
      resource: 'jobs',
      requested: 'full',
      source,
      store,
      checkpoints: new MemoryCheckpointStore(),
      logger: captureLogger().logger,
    });
    expect(summary).toMatchObject({ records: 2, rejected: 1 });
  });
});
