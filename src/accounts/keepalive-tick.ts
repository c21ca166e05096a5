/**
 * How often the keep-alive looks for partner accounts due a refresh: a sixth
 * of HIRESYNC_REFRESH_KEEPALIVE, from 1 minute to 1 hour. An account is due
 * one tick before its keep-alive runs out, so none goes past it between ticks.
 */
export function keepaliveTickMs(keepaliveMs: number): number {
  return Math.min(Math.max(Math.floor(keepaliveMs / 6), 60_000), 3_600_000);
}
