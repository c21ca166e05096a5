import { describe, expect, it } from 'vitest';
import { BUILT_IN_RESOURCES, declarationOf } from '../../../src/resources/index.js';
import { planRead } from '../../../src/resources/read-plan.js';
import type {
  Checkpoint,
  Page,
  PageWriteOptions,
  PageWriteResult,
  PreparedPage,
} from '../../../src/sync/ports.js';
import { runResource } from '../../../src/sync/run-resource.js';
import { captureLogger } from '../../support/capture-logger.js';
import {
  MemoryCheckpointStore,
  MemoryPageSource,
  MemoryRunStore,
  recordsFrom,
} from '../../support/in-memory-ports.js';

/** A gate a test opens (or fails) by hand. */
function gate() {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  promise.catch(() => {});
  return { promise, open, fail };
}

/**
 * The in-memory warehouse, each page's write held at a gate of the test's
 * before it reaches the store; `events` says when each page's write began
 * and committed, and when each checkpoint was saved, in order.
 */
class GatedStore extends MemoryRunStore {
  readonly events: string[];
  readonly gates = new Map<number, ReturnType<typeof gate>>();
  /** Commit each page as soon as its gate opens, ignoring the page before it (a store that breaks the contract). */
  ignoreEarlier = false;

  constructor(events: string[]) {
    super();
    this.events = events;
  }

  gateOf(page: number) {
    let g = this.gates.get(page);
    if (!g) {
      g = gate();
      this.gates.set(page, g);
    }
    return g;
  }

  override async writePage(
    resource: string,
    runId: string,
    page: Page,
    prepared?: PreparedPage,
    options: PageWriteOptions = {},
  ): Promise<PageWriteResult> {
    this.events.push(`start ${page.number}`);
    await this.gateOf(page.number).promise;
    const result = await super.writePage(resource, runId, page, prepared, {
      ...options,
      ...(this.ignoreEarlier ? { earlier: undefined } : {}),
    });
    this.events.push(`commit ${page.number}`);
    return result;
  }
}

class RecordingCheckpoints extends MemoryCheckpointStore {
  constructor(readonly events: string[]) {
    super();
  }

  override async save(checkpoint: Checkpoint): Promise<void> {
    await super.save(checkpoint);
    this.events.push(`checkpoint ${checkpoint.pagesDone}`);
  }
}

/** A full run of `jobs` ids 9..1, three a page (three pages), its writes held at gates. */
function setup() {
  const events: string[] = [];
  const source = new MemoryPageSource();
  source.serve('jobs', recordsFrom(9, 1), 3);
  const store = new GatedStore(events);
  const checkpoints = new RecordingCheckpoints(events);
  const plan = planRead(declarationOf(BUILT_IN_RESOURCES, 'jobs'), {
    api: { baseUrl: 'https://api.test', perPage: 100 },
  });
  const run = () =>
    runResource(plan, {
      requested: 'full',
      source,
      store,
      checkpoints,
      logger: captureLogger().logger,
    });
  return { events, store, checkpoints, run };
}

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('a pipelined walk (a full run)', () => {
  it('starts writing the next page before the page in hand commits, and saves each checkpoint only after its page and every page before it committed', async () => {
    const { events, store, run } = setup();
    const running = run();
    await settle();
    // Page 2's write began while page 1's is still open; page 3's not yet (two at most).
    expect(events).toEqual(['checkpoint 0', 'start 1', 'start 2']);
    // Page 2 is let through first: it still commits after page 1.
    store.gateOf(2).open();
    await settle();
    expect(events).toEqual(['checkpoint 0', 'start 1', 'start 2']);
    store.gateOf(1).open();
    store.gateOf(3).open();
    const summary = await running;
    expect(summary).toMatchObject({ pages: 3, records: 9 });
    const order = (event: string) => events.indexOf(event);
    expect(order('commit 1')).toBeLessThan(order('checkpoint 1'));
    expect(order('checkpoint 1')).toBeLessThan(order('commit 2'));
    expect(order('commit 2')).toBeLessThan(order('checkpoint 2'));
    // Page 3 began once page 1 was checkpointed: never more than two pages in hand.
    expect(order('start 3')).toBeGreaterThan(order('checkpoint 1'));
  });

  it('commits nothing after a page that failed, keeping the checkpoint at the page before it', async () => {
    const { events, store, checkpoints, run } = setup();
    const running = run().catch((e: unknown) => e);
    store.gateOf(1).open();
    await settle();
    store.gateOf(2).fail(new Error('connection lost on page 2'));
    store.gateOf(3).open();
    const error = await running;
    expect((error as Error).message).toBe('connection lost on page 2');
    // Page 3 began beside page 2, and committed nothing.
    expect(events).toContain('start 3');
    expect(events.filter((e) => e.startsWith('commit'))).toEqual(['commit 1']);
    expect(events.filter((e) => e.startsWith('checkpoint'))).toEqual([
      'checkpoint 0',
      'checkpoint 1',
    ]);
    expect((await checkpoints.load('jobs'))?.pagesDone).toBe(1);
  });

  it('saves checkpoints in page order even from a store that commits a later page first', async () => {
    const { events, store, run } = setup();
    store.ignoreEarlier = true;
    const running = run();
    await settle();
    store.gateOf(2).open();
    await settle();
    expect(events).toContain('commit 2');
    expect(events.filter((e) => e.startsWith('checkpoint'))).toEqual(['checkpoint 0']);
    store.gateOf(1).open();
    store.gateOf(3).open();
    await running;
    expect(events.filter((e) => e.startsWith('checkpoint'))).toEqual([
      'checkpoint 0',
      'checkpoint 1',
      'checkpoint 2',
    ]);
  });
  it('waits, after a page failed, for the write of the page beside it to end before the walk ends', async () => {
    const { events, store, run } = setup();
    let ended = false;
    const running = run()
      .catch((e: unknown) => e)
      .finally(() => {
        ended = true;
      });
    store.gateOf(1).open();
    await settle();
    expect(events).toContain('start 3');
    store.gateOf(2).fail(new Error('connection lost on page 2'));
    await settle();
    // Page 3's write is still held at its gate: the run has not ended.
    expect(ended).toBe(false);
    store.gateOf(3).open();
    await running;
    expect(ended).toBe(true);
    expect(events.filter((e) => e.startsWith('commit'))).toEqual(['commit 1']);
  });
});
