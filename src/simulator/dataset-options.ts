import type { ResourceCatalog } from '../resources/index.js';

/** A resource the simulator serves (see Dataset). */
type SimResource = string;

/** Options of `Dataset`. */
export interface DatasetOptions {
  /** Records per resource at start. Default 250 each (job_boards 13, sources 12, referrers 40: those tracking links name). */
  counts?: Partial<Record<SimResource, number>>;
  /**
   * The resources served. Each builds its records with the generator
   * simulated-records.ts holds for its name, or else as a record with the id
   * and its times. Default the built-in ones.
   */
  resources?: ResourceCatalog;
  /**
   * Extra resources held besides the catalog's (names from
   * `EXTRA_RESOURCE_NAMES`: applications, candidates, offers, departments),
   * 250 records each unless `counts` says otherwise. A name the catalog
   * declares is the catalog's. Default all of them; `[]` for none.
   */
  extraResources?: readonly string[];
  /** Seed of every generated value. Default 1. */
  seed?: number;
  /**
   * Added to every id, so that datasets side by side (the simulator's
   * accounts) hold different ids. A whole number below 10^9 minus the ids a
   * resource uses (7 per record). Default 0.
   */
  idOffset?: number;
  /** Tracking links as flat ids (`job_board_id`, `source_id`, `referrer_id`) instead of nested objects. */
  flatTrackingLinks?: boolean;
  /**
   * Job posts as v3 lists them: each carries `active` (every 7th, by index
   * 6, 13, 20, …, is inactive), and a job_posts walk leaves the inactive
   * ones out unless its first request asks `active=false`, which lists only
   * them. Default off: no `active` key, every post listed.
   */
  hideInactiveJobPosts?: boolean;
  /** Every Nth record (by index) is malformed in a rotating way; 0 for none. Default 0. */
  malformedEvery?: number;
  /**
   * Every Nth record (by index) carries a `\u0000` in a string: valid JSON of
   * the right types that Postgres cannot hold in jsonb, so hiresync rejects it.
   * 0 for none. Default 0.
   */
  nulEvery?: number;
  /**
   * How far the API's clock runs ahead of real time (negative: behind), in
   * ms: records changed after start (touch, grow) carry times on that clock.
   * Default 0.
   */
  clockSkewMs?: number;
  /**
   * Serve the v3 world (src/simulator/world, docs/simulator-world.md): the
   * analytics resources (WORLD_RESOURCES) consistent with one another and
   * with the jobs, job posts and tracking links, which it shapes too; they
   * replace the extra resources of the same names. `counts.applications`
   * (default 300) sizes it; the catalog's counts left unsaid derive from it
   * (`worldCounts`). Changed by `Dataset.advance`. Default off
   * (shape v3 turns it on).
   */
  world?: boolean;
}
