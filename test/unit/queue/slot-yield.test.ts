import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SlotYieldError } from '../../../src/errors.js';
import { SlotYield } from '../../../src/queue/slot-yield.js';
import type { PageWalkOptions, RateLimitWait } from '../../../src/sync/ports.js';
import { MemoryPageSource } from '../../support/in-memory-ports.js';

const NOW = 1_700_000_000_000;

describe('a run giving its worker slot up (HIRESYNC_MAX_SLOT_WAIT)', () => {
  it('spends waits up to the limit on the slot', () => {
    const slot = new SlotYield(5000);
    slot.onWait({ ms: 5000, cause: '429 from /v3/jobs' }, NOW);
    expect(slot.signal.aborted).toBe(false);
  });

  it('gives the slot up for a longer wait: the run stops, to resume once the wait is over', () => {
    const slot = new SlotYield(5000);
    slot.onWait({ ms: 30_000, cause: '429 from /v3/jobs' }, NOW);
    expect(slot.signal.aborted).toBe(true);
    const reason = slot.signal.reason as SlotYieldError;
    expect(reason).toBeInstanceOf(SlotYieldError);
    expect(reason.resumeAt).toBe(NOW + 30_000);
    expect(reason.message).toContain('429 from /v3/jobs');
  });

  it('keeps the first wait that gave the slot up', () => {
    const slot = new SlotYield(0);
    slot.onWait({ ms: 1000, cause: 'rate-limit pacing' }, NOW);
    slot.onWait({ ms: 60_000, cause: '429 from /v3/jobs' }, NOW);
    expect((slot.signal.reason as SlotYieldError).resumeAt).toBe(NOW + 1000);
  });

  it('without a limit, spends every wait on the slot', () => {
    const slot = new SlotYield(undefined);
    slot.onWait({ ms: 86_400_000, cause: '429 from /v3/jobs' }, NOW);
    expect(slot.signal.aborted).toBe(false);
  });

  it("hears the waits of the run's page walks, and still tells the walk's own listener", async () => {
    const source = new MemoryPageSource();
    const [first] = source.serve('jobs', [{ id: 1 }], 10);
    const slot = new SlotYield(5000);
    const heard: RateLimitWait[] = [];
    const watched = slot.watch(source);
    expect(watched.firstPageUrl('jobs')).toBe(first);
    for await (const _ of watched.pages(first as string, 1, {
      onRateLimitWait: (wait) => heard.push(wait),
    })) {
      // Drained.
    }
    const walk = source.walks[0] as PageWalkOptions;
    walk.onRateLimitWait?.({ ms: 9000, cause: 'rate-limit pacing' });
    expect(heard).toEqual([{ ms: 9000, cause: 'rate-limit pacing' }]);
    expect(slot.signal.aborted).toBe(true);
  });
});

describe('who decides to give the slot up', () => {
  it('only the queue: src/api and src/sync hold no slot-wait limit and raise no slot yield', () => {
    const mentions = ['api', 'sync'].flatMap((dir) => {
      const folder = new URL(`../../../src/${dir}/`, import.meta.url);
      return readdirSync(folder)
        .filter((name) => name.endsWith('.ts'))
        .filter((name) => /maxSlotWait|SlotYield/.test(readFileSync(new URL(name, folder), 'utf8')))
        .map((name) => `src/${dir}/${name}`);
    });
    expect(mentions).toEqual([]);
  });
});
