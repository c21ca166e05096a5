import { SlotYieldError } from '../errors.js';
import type { PageSource, RateLimitWait } from '../sync/ports.js';

/**
 * The queue's decision to give a run's worker slot up while its account's
 * rate limit holds it (HIRESYNC_MAX_SLOT_WAIT). The API layer only reports
 * each rate-limit wait before it starts (a 429's Retry-After, or the shared
 * pacing); a wait longer than `maxWaitMs` aborts {@link signal} with a
 * {@link SlotYieldError}, which ends the wait at once and stops the run as a
 * shutdown does: after its last checkpoint, to resume from it with the same
 * request once the wait is over. Undefined `maxWaitMs`: every wait is spent
 * on the slot.
 */
export class SlotYield {
  readonly #maxWaitMs: number | undefined;
  readonly #controller = new AbortController();

  constructor(maxWaitMs: number | undefined) {
    this.#maxWaitMs = maxWaitMs;
  }

  /** Aborted, with the {@link SlotYieldError}, once the run gives its slot up. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Hears of a wait about to start, and decides whether the run gives its slot up. */
  onWait(wait: RateLimitWait, now: number = Date.now()): void {
    if (this.#maxWaitMs === undefined || wait.ms <= this.#maxWaitMs) return;
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(new SlotYieldError(wait.cause, wait.ms, now));
  }

  /** `source`, reporting the rate-limit waits of its page walks to {@link onWait}. */
  watch(source: PageSource): PageSource {
    return {
      firstPageUrl: (resource) => source.firstPageUrl(resource),
      pages: (startUrl, startPage, options) =>
        source.pages(startUrl, startPage, {
          ...options,
          onRateLimitWait: (wait) => {
            options?.onRateLimitWait?.(wait);
            this.onWait(wait);
          },
        }),
    };
  }
}
