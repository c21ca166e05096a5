/**
 * What the simulator's records are computed from: each resource's id range,
 * the default counts, the stable mix every generated value comes from, and
 * the timestamps it writes.
 */

import type { ResourceCatalog } from '../resources/index.js';

/** A resource the simulator serves (see Dataset). */
type SimResource = string;

/**
 * Ids start above 2^32 so that 32-bit ids would overflow; each resource has a
 * range of its own (other resources' ranges follow the built-in ones).
 */
export const BUILT_IN_ID_BASE: Readonly<Record<string, number>> = {
  jobs: 4_300_000_000,
  job_posts: 5_300_000_000,
  tracking_links: 6_300_000_000,
  // The reference lists: tracking links name their ids (nested or flat).
  job_boards: 30_300_000_000,
  sources: 31_300_000_000,
  referrers: 32_300_000_000,
};
/**
 * Records at start of the resources whose default is not 250: the reference
 * lists hold exactly the boards, referrers and sources tracking links name.
 */
export const DEFAULT_COUNTS: Readonly<Record<string, number>> = {
  job_boards: 13,
  sources: 12,
  referrers: 40,
};
export const ID_STEP = 7;
export const ID_RANGE = 1_000_000_000;
export const EPOCH_S = Date.UTC(2024, 0, 1) / 1000;

/** A 32-bit mix of two numbers (splitmix-like), stable across runs. */
export function mix(a: number, b: number): number {
  let h = (Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d) >>> 0;
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** A wall-clock time in ms as ISO 8601 with microseconds (the sub-millisecond digits from `h`). */
export function isoMicros(ms: number, h: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}${String(h % 1000).padStart(3, '0')}Z`;
}

/** ISO 8601 with microseconds, as the API sends them. */
export function timestamp(seconds: number, micros: number): string {
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${iso}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
}

/** Id bases by catalog: every dataset of a catalog shares one map. */
const idBases = new WeakMap<ResourceCatalog, ReadonlyMap<SimResource, number>>();

export function idBasesOf(resources: ResourceCatalog): ReadonlyMap<SimResource, number> {
  let bases = idBases.get(resources);
  if (!bases) {
    const map = new Map<SimResource, number>();
    let nextBase = 7_300_000_000;
    for (const name of resources.keys()) {
      const base = BUILT_IN_ID_BASE[name];
      map.set(name, base ?? nextBase);
      if (base === undefined) nextBase += ID_RANGE;
    }
    bases = map;
    idBases.set(resources, bases);
  }
  return bases;
}
