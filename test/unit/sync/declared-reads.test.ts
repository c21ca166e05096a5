import { describe, expect, it } from 'vitest';
import { ANALYTICS_RESOURCES, declarationOf } from '../../../src/resources/index.js';
import { planRead } from '../../../src/resources/read-plan.js';
import { runResource } from '../../../src/sync/run-resource.js';
import { captureLogger } from '../../support/capture-logger.js';
import {
  MemoryCheckpointStore,
  MemoryPageSource,
  MemoryRunStore,
  recordsFrom,
} from '../../support/in-memory-ports.js';

// Runs of the analytics lists whose reads declare more than DEFAULT_READ:
// constant parameters, and every run full. The in-memory API serves 100 a page.

/** An API serving `resource` ids 9..1, three a page, at the first URL its plan asks for. */
function setup(resource: string, deployment: { updatedFilter?: string } = {}) {
  const plan = planRead(declarationOf(ANALYTICS_RESOURCES, resource), {
    api: { baseUrl: 'https://api.test', perPage: 100 },
    updatedLookbackMs: 0,
    ...deployment,
  });
  const source = new MemoryPageSource();
  const urls = source.serve(resource, recordsFrom(9, 1), 3);
  source.alias(plan.walks[0].firstUrl, urls[0] as string);
  const store = new MemoryRunStore();
  const checkpoints = new MemoryCheckpointStore();
  const run = () =>
    runResource(plan, {
      requested: 'auto',
      source,
      store,
      checkpoints,
      logger: captureLogger().logger,
    });
  return { plan, source, urls, store, run };
}

describe('a list without a date filter (demographic_questions)', () => {
  it('is read in full, and swept, when a schedule asks for an incremental run after a full one', async () => {
    const { plan, source, urls, store, run } = setup('demographic_questions');
    // A completed full run stored ids 1..5 and 42, which the list no longer has.
    await store.seedRun('demographic_questions', 'full', 'succeeded', [
      ...recordsFrom(5, 1),
      { id: 42 },
    ]);
    const summary = await run();
    expect(summary).toMatchObject({ mode: 'full', pages: 3, records: 9, deleted: 1 });
    expect(source.requested).toEqual([plan.walks[0].firstUrl, ...urls.slice(1)]);
    expect(store.deleted.get('demographic_questions')).toEqual(new Set(['42']));
  });

  it('is read in full even when HIRESYNC_UPDATED_FILTER is set: the filter is never sent', async () => {
    const { source, store, run } = setup('demographic_answer_options', {
      updatedFilter: 'updated_at=gte|{since}',
    });
    await store.seedRun('demographic_answer_options', 'full', 'succeeded', recordsFrom(5, 1));
    store.updatedSinceAnswer = '2026-03-01T10:00:00.000000Z';
    expect(await run()).toMatchObject({ mode: 'full', pages: 3 });
    expect(source.requested.join(' ')).not.toContain('updated_at');
  });
});

describe('a list with constant parameters', () => {
  it.each([
    ['rejection_reasons', 'include_defaults=true'],
    ['users', 'show_service_accounts=true'],
  ])('%s sends %s on its first request only, never beside a cursor', async (resource, constant) => {
    const { source, urls, run } = setup(resource);
    expect(await run()).toMatchObject({ mode: 'full', pages: 3 });
    expect(source.requested).toHaveLength(3);
    expect(source.requested[0]).toContain(constant);
    expect(source.requested.slice(1)).toEqual(urls.slice(1));
    for (const url of source.requested.slice(1)) {
      expect([...new URL(url).searchParams.keys()]).toEqual(['cursor']);
    }
  });

  it('sends them beside the updated filter on an incremental run, and records only the filter', async () => {
    const { plan, source, store, run } = setup('users');
    await store.seedRun('users', 'full', 'succeeded', recordsFrom(5, 1));
    store.updatedSinceAnswer = '2026-03-01T10:00:00.000000Z';
    const filtered = `${plan.walks[0].firstUrl}&updated_at=gte|2026-03-01T10%3A00%3A00.000000Z`;
    source.alias(filtered, plan.walks[0].firstUrl);
    const summary = await run();
    expect(summary.mode).toBe('incremental');
    expect(source.requested[0]).toBe(filtered);
    expect(store.runs.get(summary.runId)?.filter).toBe(
      'updated_at=gte|2026-03-01T10%3A00%3A00.000000Z',
    );
  });
});
