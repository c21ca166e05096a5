import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach } from 'vitest';
import { type AccountsHarness, startAccountsHarness } from './accounts-harness.js';
import { type PartnerHarness, startPartnerHarness } from './partner-harness.js';
import { type CliProcess, spawnCli } from './run-cli.js';
import { type SyncHarness, startSyncHarness } from './sync-harness.js';

type Cleanup = () => Promise<unknown> | unknown;

/**
 * Cleanups that run after each test of the file, the last registered first,
 * and harnesses and CLI processes closed by them. Call once at the top of a
 * test file.
 */
export function cleanupAfterEach(): {
  defer: (cleanup: Cleanup) => void;
  /** A {@link SyncHarness}: one account, `default`. */
  harness: (options?: Parameters<typeof startSyncHarness>[0]) => Promise<SyncHarness>;
  /** An {@link AccountsHarness}: `default` and the named accounts. */
  accounts: (options: Parameters<typeof startAccountsHarness>[0]) => Promise<AccountsHarness>;
  /** A {@link PartnerHarness}: `acme`, a partner account. */
  partner: (simulator?: Parameters<typeof startPartnerHarness>[0]) => Promise<PartnerHarness>;
  /** The built CLI in a child process, killed (SIGKILL) after the test if still running. */
  cli: (args: string[], env: Record<string, string | undefined>) => CliProcess;
} {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const closed = async <T extends { close: () => Promise<void> }>(started: Promise<T>) => {
    const h = await started;
    cleanups.push(() => h.close());
    return h;
  };
  return {
    defer: (cleanup) => {
      cleanups.push(cleanup);
    },
    harness: (options) => closed(startSyncHarness(options)),
    accounts: (options) => closed(startAccountsHarness(options)),
    partner: (simulator) => closed(startPartnerHarness(simulator)),
    cli: (args, env) => {
      const started = spawnCli(args, env);
      cleanups.push(() => started.kill());
      return started;
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
