import type { ScopedSeries } from './account-series-scope.js';
import { readWithin } from './read-within.js';

/** Past the threshold, a read older than this is made again, in the background. */
const REFRESH_AFTER_MS = 10_000;
/**
 * A scrape serves a read up to this old rather than wait for Postgres (past
 * the threshold), or when Postgres cannot be read; never an older one.
 */
export const SERVE_UP_TO_MS = 120_000;

/**
 * What a scrape reads of the accounts in Postgres, once per scrape (shared by
 * the series it feeds). Up to the account threshold, every scrape reads it
 * anew, as ever. Past it, the read of thousands of accounts takes a second or
 * more: a scrape serves the last read while it is under 2 minutes old and
 * starts another when it is over 10 s old, without waiting for it, so a
 * scrape's time does not depend on Postgres, and Postgres is read at most
 * once in 10 s per worker however many Prometheus servers scrape it. The
 * alerts' `for` (5 minutes and more) dwarfs that lag. When Postgres cannot be
 * read, a scrape serves the last read while it is under 2 minutes old, then
 * nothing (undefined): the series read from it are dropped, not left stale.
 */
export class ScopeReader {
  readonly #read: () => Promise<ScopedSeries | undefined>;
  readonly #now: () => number;
  #last: { atMs: number; scope: ScopedSeries } | undefined;
  #inFlight: Promise<ScopedSeries | undefined> | undefined;
  #scrape: Promise<ScopedSeries | undefined> | undefined;

  /** `read`: one read of Postgres (undefined when it cannot be read); `now`: the clock, in ms. */
  constructor(read: () => Promise<ScopedSeries | undefined>, now: () => number = Date.now) {
    this.#read = read;
    this.#now = now;
  }

  /** When the last read that answered was made (epoch ms); undefined before the first. */
  get lastReadAtMs(): number | undefined {
    return this.#last?.atMs;
  }

  /** The scope of the scrape under way; undefined when no read under 2 minutes old is at hand. */
  forScrape(): Promise<ScopedSeries | undefined> {
    this.#scrape ??= this.#choose().finally(() => {
      // Once every series of this scrape has asked for it.
      setImmediate(() => {
        this.#scrape = undefined;
      });
    });
    return this.#scrape;
  }

  async #choose(): Promise<ScopedSeries | undefined> {
    const last = this.#last;
    const age = last ? this.#now() - last.atMs : Number.POSITIVE_INFINITY;
    if (last && !last.scope.perAccount && age < SERVE_UP_TO_MS) {
      if (age >= REFRESH_AFTER_MS) void this.#readNow();
      return last.scope;
    }
    const scope = await readWithin(() => this.#readNow());
    if (scope) return scope;
    // Postgres did not answer in time: the last read while it is young enough.
    const latest = this.#last;
    return latest && this.#now() - latest.atMs < SERVE_UP_TO_MS ? latest.scope : undefined;
  }

  /** The read under way, or a new one; a read that outlasts a scrape's wait is kept for the next. */
  #readNow(): Promise<ScopedSeries | undefined> {
    this.#inFlight ??= this.#read()
      .catch(() => undefined)
      .then((scope) => {
        if (scope) this.#last = { atMs: this.#now(), scope };
        return scope;
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }
}
