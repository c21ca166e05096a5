import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach } from 'vitest';
import { type SyncHarness, startSyncHarness } from './sync-harness.js';

type Cleanup = () => Promise<unknown> | unknown;

/**
 * Cleanups that run after each test of the file, the last registered first.
 * Call once at the top of a test file.
 */
export function cleanupAfterEach(): {
  defer: (cleanup: Cleanup) => void;
  harness: (options?: Parameters<typeof startSyncHarness>[0]) => Promise<SyncHarness>;
} {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    defer: (cleanup) => {
      cleanups.push(cleanup);
    },
    harness: async (options) => {
      const h = await startSyncHarness(options);
      cleanups.push(() => h.close());
      return h;
    },
  };
}

/** Polls `check` until it returns a truthy value (returned), or throws after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(intervalMs);
  }
}
