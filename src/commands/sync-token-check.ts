import { unreachableIn } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RunOnceOutcome } from '../queue/run-once.js';
import type { AccountContext } from '../queue/sync-processor.js';
import type { ScheduleTarget } from '../queue/upsert-schedules.js';
import { redactSecrets } from '../secret.js';

/** What {@link runWhereReachable} checks the accounts with (the App provides it). */
export interface TokenCheckDeps {
  /** The context of an account's runs, whose `ensureToken` is called. */
  contextOf: (account: string) => Promise<AccountContext>;
  logger: Logger;
  /** How many accounts are checked at once: HIRESYNC_CONCURRENCY. */
  concurrency: number;
}

/**
 * Makes sure each account has an access token (no request when one is in
 * force), `concurrency` accounts at once. Returns the accounts whose token
 * service could not be reached at all, each with the redacted message; any
 * other failure (refused credentials, a 5xx, an account that cannot be
 * prepared) is left to the runs, which record it.
 */
async function unreachableAccounts(
  deps: TokenCheckDeps,
  accounts: readonly string[],
): Promise<Map<string, string>> {
  const unreachable = new Map<string, string>();
  const waiting = [...accounts];
  const check = async (account: string) => {
    try {
      const context = await deps.contextOf(account);
      await context.ensureToken?.();
    } catch (error) {
      if (!unreachableIn(error)) return;
      const message = redactSecrets((error as Error).message);
      unreachable.set(account, message);
      deps.logger.warn(
        { component: 'sync', account, err: error },
        "token service unreachable: the account's runs were not started",
      );
    }
  };
  const lanes = Math.max(1, Math.min(deps.concurrency, waiting.length));
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let account = waiting.shift(); account !== undefined; account = waiting.shift()) {
        await check(account);
      }
    }),
  );
  return unreachable;
}

/**
 * `sync`'s runs, told at once when an account's token service cannot be
 * reached: before anything is queued, each account of `targets` gets its
 * access token (see {@link unreachableAccounts}); the targets of an account
 * whose token service is unreachable end `not started: <why>` instead of
 * waiting out every attempt of every run, and the rest are `run`. Outcomes
 * come in the order of `targets`.
 */
export async function runWhereReachable(
  deps: TokenCheckDeps,
  targets: readonly ScheduleTarget[],
  run: (targets: ScheduleTarget[]) => Promise<RunOnceOutcome[]>,
): Promise<RunOnceOutcome[]> {
  const accounts = [...new Set(targets.map((t) => t.account))];
  const unreachable = await unreachableAccounts(deps, accounts);
  const runnable = targets.filter((t) => !unreachable.has(t.account));
  const ran = runnable.length === 0 ? [] : await run(runnable);
  let next = 0;
  return targets.map(({ account, resource }): RunOnceOutcome => {
    const why = unreachable.get(account);
    if (why !== undefined) return { account, resource, ok: false, error: `not started: ${why}` };
    const outcome = ran[next];
    next += 1;
    if (!outcome) throw new Error(`no outcome of the run of ${resource} of ${account}`);
    return outcome;
  });
}
