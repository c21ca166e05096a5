/** First wait of a job whose resource is busy; it doubles on each wait, up to {@link BUSY_MAX_DELAY_MS}. */
export const BUSY_FIRST_DELAY_MS = 2000;
export const BUSY_MAX_DELAY_MS = 60_000;

/** How long a job waits after finding its resource busy for the `waits + 1`th time: 2 s, 4 s, 8 s, … 60 s. */
export function busyDelayMs(waits: number): number {
  return Math.min(BUSY_FIRST_DELAY_MS * 2 ** Math.max(0, waits), BUSY_MAX_DELAY_MS);
}
