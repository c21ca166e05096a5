import { describe, expect, it } from 'vitest';
import { CursorRejectedError, RunInterruptedError } from '../../../src/errors.js';
import { BUILT_IN_RESOURCES, declarationOf } from '../../../src/resources/index.js';
import { planRead } from '../../../src/resources/read-plan.js';
import { type RunResourceOptions, runResource } from '../../../src/sync/run-resource.js';
import { captureLogger } from '../../support/capture-logger.js';
import {
  MemoryCheckpointStore,
  MemoryPageSource,
  MemoryRunStore,
  recordsFrom,
} from '../../support/in-memory-ports.js';

/** A run's options, and the deployment settings its read is planned from. */
type RunOptions = Partial<RunResourceOptions> & {
  /** HIRESYNC_UPDATED_FILTER and HIRESYNC_UPDATED_LOOKBACK. */
  updatedFilter?: { template: string; lookbackMs: number };
  /** HIRESYNC_EXTRA_WALKS of jobs. */
  extraWalks?: readonly string[];
};

/** The read of `jobs` from the in-memory API (MEMORY_API, 100 a page) under those settings. */
function jobsPlan({ updatedFilter, extraWalks }: RunOptions = {}) {
  return planRead(declarationOf(BUILT_IN_RESOURCES, 'jobs'), {
    api: { baseUrl: 'https://api.test', perPage: 100 },
    updatedFilter: updatedFilter?.template,
    updatedLookbackMs: updatedFilter?.lookbackMs,
    extraWalks: extraWalks && { jobs: extraWalks },
  });
}

/** An API serving `jobs` ids 9..1, three a page, and an empty warehouse. */
function setup() {
  const source = new MemoryPageSource();
  const urls = source.serve('jobs', recordsFrom(9, 1), 3);
  const store = new MemoryRunStore();
  const checkpoints = new MemoryCheckpointStore();
  const log = captureLogger();
  const run = ({ updatedFilter, extraWalks, ...options }: RunOptions = {}) =>
    runResource(jobsPlan({ updatedFilter, extraWalks }), {
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

  it('stops an incremental run by id after the page that reaches the highest id already stored, without prefetching, counting only the records it stored', async () => {
    const { source, urls, store, run } = setup();
    // A completed full run stored ids up to 5: pages hold 9..7, 6..4, 3..1.
    await store.seedRun('jobs', 'full', 'succeeded', recordsFrom(5, 1));
    const summary = await run({ requested: 'auto' });
    // 9..6 are new; 5 and 4, stored as they are, are left alone.
    expect(summary).toMatchObject({ mode: 'incremental', pages: 2, records: 4 });
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
    expect(summary).toMatchObject({ mode: 'incremental', pages: 3, records: 4 });
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
    const summary = await runResource(jobsPlan(), {
      requested: 'full',
      source,
      store,
      checkpoints: new MemoryCheckpointStore(),
      logger: captureLogger().logger,
    });
    expect(summary).toMatchObject({ records: 2, rejected: 1 });
  });
});

describe('runResource with extra walks', () => {
  /** `jobs` 9..1 three a page on the default walk, and 14, 12, 10, 3, 2 two a page on `active=false`. */
  function setupWalks() {
    const base = setup();
    const walkUrls = base.source.serve(
      'jobs',
      [14, 12, 10, 3, 2].map((id) => ({ id, name: `hidden ${id}` })),
      2,
      'active=false',
    );
    const run = (options: RunOptions = {}) =>
      base.run({ extraWalks: ['active=false'], ...options });
    return { ...base, walkUrls, run };
  }

  it('reads the default walk and then the extra walk as one run, counting pages across both', async () => {
    const { source, urls, walkUrls, store, checkpoints, run } = setupWalks();
    const summary = await run({ requested: 'full' });
    expect(summary).toMatchObject({ mode: 'full', pages: 6, records: 14 });
    expect(store.runs.size).toBe(1);
    expect(source.requested).toEqual([...urls, ...walkUrls]);
    // The extra walk's query goes beside per_page on its first request.
    expect(walkUrls[0]).toBe('https://api.test/v3/jobs?per_page=100&active=false');
    expect(store.calls.filter((c) => c.startsWith('writePage'))).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => `writePage ${summary.runId} ${n}`),
    );
    // Each checkpoint says which walk its next URL belongs to; the walk's first page needs no cursor.
    expect(checkpoints.saves.map((c) => [c.walk, c.walkQuery, c.nextUrl, c.pagesDone])).toEqual([
      [0, undefined, urls[0], 0],
      [0, undefined, urls[1], 1],
      [0, undefined, urls[2], 2],
      [1, 'active=false', walkUrls[0], 3],
      [1, 'active=false', walkUrls[1], 4],
      [1, 'active=false', walkUrls[2], 5],
    ]);
    expect(source.walks.map((w) => w.fromCheckpoint)).toEqual([false, false]);
    expect(await checkpoints.load('jobs')).toBeUndefined();
  });

  it('sweeps only the ids that no walk returned', async () => {
    const { store, run } = setupWalks();
    // Stored before: 20 (no walk serves it any more), 14 (the extra walk does), 5 (the default walk does).
    await store.seedRun('jobs', 'full', 'succeeded', [
      { id: 20, name: 'gone' },
      { id: 14, name: 'hidden 14' },
      { id: 5, name: 'record 5' },
    ]);
    const summary = await run({ requested: 'full' });
    expect([...(store.deleted.get('jobs') ?? [])]).toEqual(['20']);
    expect(summary.deleted).toBe(1);
  });

  it('resumes a run interrupted in its second walk there, with the same run id and page count', async () => {
    const { source, walkUrls, store, checkpoints, run } = setupWalks();
    const runId = await store.seedRun('jobs', 'full', 'running');
    await checkpoints.save({
      ...checkpointOf(runId, 'full', walkUrls[1] as string, 4, 'unused'),
      walk: 1,
      walkQuery: 'active=false',
    });
    const summary = await run();
    expect(summary).toMatchObject({ runId, resumed: true });
    expect(source.requested).toEqual(walkUrls.slice(1));
    expect(store.calls.filter((c) => c.startsWith('writePage'))).toEqual([
      `writePage ${runId} 5`,
      `writePage ${runId} 6`,
    ]);
    expect(store.calls).toContain(`sweepDeletions ${runId}`);
  });

  it('resumes a run stopped at the end of its default walk at the extra walk’s first page, not as a cursor', async () => {
    const { source, urls, walkUrls, checkpoints, run } = setupWalks();
    const controller = new AbortController();
    const error = await run({
      requested: 'full',
      signal: controller.signal,
      onProgress: (progress) => {
        if (progress.pages === 3) controller.abort(new Error('shutdown'));
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunInterruptedError);
    expect(await checkpoints.load('jobs')).toMatchObject({
      walk: 1,
      walkQuery: 'active=false',
      nextUrl: walkUrls[0],
      pagesDone: 3,
    });
    source.requested.length = 0;
    const summary = await run();
    expect(summary).toMatchObject({ resumed: true, pages: 6 });
    expect(source.requested).toEqual(walkUrls);
    expect(source.walks.at(-1)?.fromCheckpoint).toBe(false);
    expect(urls).toHaveLength(3);
  });

  it('resumes a checkpoint saved before extra walks existed (no walk) in the default walk, then reads the extra walk', async () => {
    const { source, urls, walkUrls, store, checkpoints, run } = setupWalks();
    const runId = await store.seedRun('jobs', 'full', 'running');
    const old = checkpointOf(runId, 'full', urls[1] as string, 1, urls[0] as string);
    expect(old).not.toHaveProperty('walk');
    await checkpoints.save(old);
    const summary = await run();
    expect(summary).toMatchObject({ runId, resumed: true });
    expect(source.requested).toEqual([...urls.slice(1), ...walkUrls]);
    expect(store.calls.filter((c) => c.startsWith('writePage'))).toEqual(
      [2, 3, 4, 5, 6].map((n) => `writePage ${runId} ${n}`),
    );
  });

  it('stops each walk of an incremental run by id on its own', async () => {
    const { source, urls, walkUrls, store, run } = setupWalks();
    // A completed full run stored ids up to 5.
    await store.seedRun('jobs', 'full', 'succeeded', recordsFrom(5, 1));
    const summary = await run({ requested: 'auto' });
    expect(summary).toMatchObject({ mode: 'incremental', pages: 4 });
    // Default walk: 9..7, 6..4 (reaches 5); extra walk: 14, 12 and 10, 3 (reaches 5).
    expect(source.requested).toEqual([...urls.slice(0, 2), ...walkUrls.slice(0, 2)]);
  });

  it('sends the updated filter on the first request of each walk', async () => {
    const { source, urls, walkUrls, store, run } = setupWalks();
    await store.seedRun('jobs', 'full', 'succeeded', recordsFrom(5, 1));
    store.updatedSinceAnswer = '2026-03-01T10:00:00.000000Z';
    const updated = 'updated_after=2026-03-01T10%3A00%3A00.000000Z';
    source.alias(`${urls[0]}&${updated}`, urls[0] as string);
    source.alias(`${walkUrls[0]}&${updated}`, walkUrls[0] as string);
    const summary = await run({
      requested: 'auto',
      updatedFilter: { template: 'updated_after={since}', lookbackMs: 60_000 },
    });
    expect(summary).toMatchObject({ mode: 'incremental', pages: 6 });
    expect(source.requested).toEqual([
      `${urls[0]}&${updated}`,
      ...urls.slice(1),
      `${walkUrls[0]}&${updated}`,
      ...walkUrls.slice(1),
    ]);
  });

  it('restarts the whole run from the default walk when the API rejects a cursor of the extra walk', async () => {
    const { source, urls, walkUrls, store, checkpoints, run } = setupWalks();
    const runId = await store.seedRun('jobs', 'full', 'running');
    await checkpoints.save({
      ...checkpointOf(runId, 'full', walkUrls[1] as string, 4, urls[0] as string),
      walk: 1,
      walkQuery: 'active=false',
    });
    source.failNext(walkUrls[1] as string, new CursorRejectedError(422, '/v3/jobs', 'stale', '{}'));
    const summary = await run();
    expect(summary).toMatchObject({ runId, pages: 6, records: 14 });
    expect(source.requested).toEqual([walkUrls[1], ...urls, ...walkUrls]);
  });
});
