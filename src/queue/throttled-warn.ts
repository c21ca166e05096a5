import type { Logger } from '../logger.js';

/**
 * An 'error' listener that logs at warn at most once per `intervalMs`
 * (default 60 s), counting what it left out: during a Redis outage BullMQ's
 * queues and workers emit an error for every failed call, which would flood
 * the log.
 */
export function throttledWarn(
  logger: Logger,
  message: string,
  intervalMs = 60_000,
): (error: Error) => void {
  let loggedAt = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  return (error: Error) => {
    const now = Date.now();
    if (now - loggedAt < intervalMs) {
      suppressed += 1;
      return;
    }
    logger.warn({ err: error, ...(suppressed > 0 ? { suppressed } : {}) }, message);
    loggedAt = now;
    suppressed = 0;
  };
}
