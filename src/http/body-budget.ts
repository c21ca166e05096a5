/** Default most bodies read at once: HIRESYNC_WEBHOOK_MAX_INFLIGHT. */
export const DEFAULT_MAX_INFLIGHT_BODIES = 32;

/** Default most bytes of them held at once: HIRESYNC_WEBHOOK_MAX_BUFFERED_BYTES (16 MiB). */
export const DEFAULT_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** Options of {@link BodyBudget}. */
export interface BodyBudgetOptions {
  /** Most bodies being read (or held) at once. Default {@link DEFAULT_MAX_INFLIGHT_BODIES}. */
  maxInflight?: number;
  /** Most bytes of them held at once. Default {@link DEFAULT_MAX_BUFFERED_BYTES}. */
  maxBytes?: number;
}

/**
 * One body's share of a {@link BodyBudget}: the bytes it may hold, taken as
 * they arrive, all given back by {@link release} (which may be called again).
 */
export interface BodyAllowance {
  /** Takes `bytes` more; false (nothing taken) when the budget has not that many left. */
  take(bytes: number): boolean;
  /** Gives back the slot and every byte taken; later calls do nothing. */
  release(): void;
}

/**
 * What the unauthenticated bodies of a server may hold at once, before
 * their signatures are checked: at most `maxInflight` bodies and `maxBytes`
 * bytes in all. A body that finds no slot, or no bytes left, is refused
 * rather than waited for: the sender is told to come back later, and
 * nothing more of it is read into memory. The counters return to 0 once
 * every allowance is released; `peakBytes` and `peakInflight` keep the most
 * they ever held (never above the bounds).
 */
export class BodyBudget {
  readonly maxInflight: number;
  readonly maxBytes: number;
  #inflight = 0;
  #bytes = 0;
  #peakInflight = 0;
  #peakBytes = 0;

  constructor(options: BodyBudgetOptions = {}) {
    this.maxInflight = options.maxInflight ?? DEFAULT_MAX_INFLIGHT_BODIES;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  }

  /** Bodies holding a slot now. */
  get inflight(): number {
    return this.#inflight;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The most bodies ever held at once. */
  get peakInflight(): number {
    return this.#peakInflight;
  }

  /** The most bytes ever held at once. */
  get peakBytes(): number {
    return this.#peakBytes;
  }

  /** A slot for one body, or undefined when `maxInflight` bodies hold one already. */
  enter(): BodyAllowance | undefined {
    if (this.#inflight >= this.maxInflight) return undefined;
    this.#inflight += 1;
    this.#peakInflight = Math.max(this.#peakInflight, this.#inflight);
    let taken = 0;
    let released = false;
    return {
      take: (bytes) => {
        if (released || this.#bytes + bytes > this.maxBytes) return false;
        taken += bytes;
        this.#bytes += bytes;
        this.#peakBytes = Math.max(this.#peakBytes, this.#bytes);
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#bytes -= taken;
        this.#inflight -= 1;
      },
    };
  }
}
