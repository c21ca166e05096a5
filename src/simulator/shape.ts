import type { DatasetOptions } from './dataset.js';
import type { RateLimit } from './rate-limiter.js';
import type { SimulatorOptions, SimulatorShape } from './simulator-options.js';

/** Every shape, for `hiresync simulate --shape`. */
export const SIMULATOR_SHAPES: readonly SimulatorShape[] = ['seed', 'v3'];

/** The v3 shape's window unless one is given: 75 requests per 30 s, the vendor docs' example. */
export const V3_RATE_LIMIT: Readonly<RateLimit> = { limit: 75, windowMs: 30_000 };

/**
 * The v3 shape's token-endpoint window unless one is given: its own 60 s
 * window (the fact sheet), at a limit the vendor does not publish; 60 is this
 * simulator's guess.
 */
export const V3_TOKEN_ENDPOINT_WINDOW: Readonly<RateLimit> = { limit: 60, windowMs: 60_000 };

/** What a shape turns on: the simulator's options and every account's dataset options. */
export interface ShapeDefaults {
  simulator: SimulatorOptions;
  dataset: DatasetOptions;
}

/**
 * The one place a shape turns options on. `seed` turns on nothing. `v3`:
 * flat tracking links, tokens stating `expires_at` (ISO 8601, no
 * `expires_in`), a fixed window of 75 requests / 30 s with
 * `X-RateLimit-Limit`, `-Remaining` and `-Reset` (Unix epoch seconds) on
 * every list response but 429s, a one-minute authorization code,
 * per-resource scopes for partner grants (403 for a list whose scope a grant
 * lacks), RFC 6749 error bodies on every token error, and the token
 * endpoint's own 60 s window; job posts hidden unless `active=false`; the
 * v3 world (DatasetOptions.world): applications, stage histories, offers,
 * openings, rejections, EEOC and demographic answers consistent with the
 * jobs, job posts and tracking links.
 */
export function shapeDefaults(shape: SimulatorShape): ShapeDefaults {
  if (shape === 'seed') return { simulator: {}, dataset: {} };
  return {
    simulator: {
      expiresField: 'expires_at',
      rateLimit: { ...V3_RATE_LIMIT },
      rateLimitHeaders: true,
      rateLimitHeadersOn429: false,
      rateLimitResetFormat: 'epoch',
      authorizationCodeTtlSeconds: 60,
      resourceScopes: true,
      oauthErrorBodies: true,
      tokenEndpointWindow: { ...V3_TOKEN_ENDPOINT_WINDOW },
    },
    dataset: { flatTrackingLinks: true, hideInactiveJobPosts: true, world: true },
  };
}

/**
 * `given` with each option it leaves undefined taken from `defaults` (an
 * option set to anything, `null` and `false` included, is kept).
 */
export function withDefaults<T extends object>(defaults: T, given: T): T {
  const merged: Record<string, unknown> = { ...(given as Record<string, unknown>) };
  for (const [key, value] of Object.entries(defaults))
    if (merged[key] === undefined) merged[key] = value;
  return merged as T;
}
