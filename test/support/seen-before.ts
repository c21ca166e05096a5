import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `seen` until it holds (true) or `racer` settles first (false): a
 * race test awaits a state (a lock waited for, a page written) while the
 * other side runs, and must fail, not go on, when that side ended without
 * ever reaching it. No count of polls and no deadline: a racer that neither
 * reaches the state nor ends fails the test by its timeout.
 */
export async function seenBefore(
  racer: Promise<unknown>,
  seen: () => Promise<boolean>,
  intervalMs = 25,
): Promise<boolean> {
  let settled = false;
  const ended = racer.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (;;) {
    if (await seen()) return true;
    if (settled) return false;
    await Promise.race([sleep(intervalMs), ended]);
  }
}
