/**
 * The simulator's data: deterministic records computed from their index, so a
 * dataset of millions costs no memory. Only changes made after start (removed,
 * touched or added records) are held, and those are few.
 */

export type SimResource = 'jobs' | 'job_posts' | 'tracking_links';

/** Options of {@link Dataset}. */
export interface DatasetOptions {
  /** Records per resource at start. Default 250 each. */
  counts?: Partial<Record<SimResource, number>>;
  /** Seed of every generated value. Default 1. */
  seed?: number;
  /** Tracking links as flat ids (`job_board_id`, `source_id`, `referrer_id`) instead of nested objects. */
  flatTrackingLinks?: boolean;
  /** Every Nth record (by index) is malformed in a rotating way; 0 for none. Default 0. */
  malformedEvery?: number;
  /**
   * Every Nth record (by index) carries a `\u0000` in a string: valid JSON of
   * the right types that Postgres cannot hold in jsonb, so hiresync rejects it.
   * 0 for none. Default 0.
   */
  nulEvery?: number;
}

/** Ids start above 2^32 so that 32-bit ids would overflow. */
const ID_BASE: Record<SimResource, number> = {
  jobs: 4_300_000_000,
  job_posts: 5_300_000_000,
  tracking_links: 6_300_000_000,
};
const ID_STEP = 7;
const EPOCH_S = Date.UTC(2024, 0, 1) / 1000;
const JOB_STATUSES = ['open', 'closed', 'draft'] as const;

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

/** ISO 8601 with microseconds, as the API sends them. */
function timestamp(seconds: number, micros: number): string {
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${iso}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
}

export class Dataset {
  readonly flatTrackingLinks: boolean;
  readonly malformedEvery: number;
  readonly nulEvery: number;
  /** Bumped by every change, so cached pages of an older version are not served. */
  version = 0;
  readonly #seed: number;
  readonly #counts: Record<SimResource, number>;
  readonly #removed: Record<SimResource, Set<number>> = {
    jobs: new Set(),
    job_posts: new Set(),
    tracking_links: new Set(),
  };
  readonly #versions: Record<SimResource, Map<number, number>> = {
    jobs: new Map(),
    job_posts: new Map(),
    tracking_links: new Map(),
  };

  constructor(options: DatasetOptions = {}) {
    this.#seed = options.seed ?? 1;
    this.flatTrackingLinks = options.flatTrackingLinks ?? false;
    this.malformedEvery = options.malformedEvery ?? 0;
    this.nulEvery = options.nulEvery ?? 0;
    this.#counts = {
      jobs: options.counts?.jobs ?? 250,
      job_posts: options.counts?.job_posts ?? 250,
      tracking_links: options.counts?.tracking_links ?? 250,
    };
  }

  /** Number of index slots (removed ones included). */
  size(resource: SimResource): number {
    return this.#counts[resource];
  }

  idOf(resource: SimResource, index: number): number {
    return ID_BASE[resource] + index * ID_STEP;
  }

  /** Index of the highest slot whose id is strictly below `id` (may be -1). */
  indexBelow(resource: SimResource, id: number): number {
    const index = Math.ceil((id - ID_BASE[resource]) / ID_STEP) - 1;
    return Math.min(index, this.#counts[resource] - 1);
  }

  isPresent(resource: SimResource, index: number): boolean {
    return index >= 0 && index < this.#counts[resource] && !this.#removed[resource].has(index);
  }

  /** Removes a record: the next full sync should soft-delete it. */
  remove(resource: SimResource, index: number): number {
    this.version += 1;
    this.#removed[resource].add(index);
    return this.idOf(resource, index);
  }

  /** Changes a record (new updated_at and content): the next full sync should pick it up. */
  touch(resource: SimResource, index: number): number {
    this.version += 1;
    const versions = this.#versions[resource];
    versions.set(index, (versions.get(index) ?? 0) + 1);
    return this.idOf(resource, index);
  }

  /** Adds `n` records newer (higher ids) than all others; returns their ids. */
  grow(resource: SimResource, n: number): number[] {
    this.version += 1;
    const start = this.#counts[resource];
    this.#counts[resource] += n;
    return Array.from({ length: n }, (_, k) => this.idOf(resource, start + k));
  }

  /** True when the record at `index` is deliberately malformed. */
  isMalformed(index: number): boolean {
    return this.malformedEvery > 0 && index % this.malformedEvery === this.malformedEvery - 1;
  }

  /** Every present index, descending (the API's order). For tests that compare tables with the data. */
  *presentIndexes(resource: SimResource): Generator<number> {
    for (let i = this.#counts[resource] - 1; i >= 0; i -= 1)
      if (this.isPresent(resource, i)) yield i;
  }

  /** The record at `index` as the API would send it (a malformed one included). */
  record(resource: SimResource, index: number): unknown {
    if (this.isMalformed(index)) return this.#malformed(resource, index);
    const record = this.#wellFormed(resource, index);
    return this.hasNul(index) ? { ...record, note: `NUL \u0000 inside ${index}` } : record;
  }

  /** True when the record at `index` carries a `\u0000` (and is not malformed otherwise). */
  hasNul(index: number): boolean {
    return (
      this.nulEvery > 0 && index % this.nulEvery === this.nulEvery - 2 && !this.isMalformed(index)
    );
  }

  #wellFormed(resource: SimResource, index: number): Record<string, unknown> {
    switch (resource) {
      case 'jobs':
        return this.#job(index);
      case 'job_posts':
        return this.#jobPost(index);
      case 'tracking_links':
        return this.flatTrackingLinks ? this.#flatTrackingLink(index) : this.#trackingLink(index);
    }
  }

  /** Status of the job at `index` (for the list's `status` filter). */
  jobStatus(index: number): string {
    if (this.isMalformed(index)) return 'malformed';
    return JOB_STATUSES[mix(this.#seed, index) % 3] ?? 'open';
  }

  #times(resource: SimResource, index: number) {
    const h = mix(this.#seed + 11, index);
    const version = this.#versions[resource].get(index) ?? 0;
    const created = EPOCH_S + index * 60;
    return {
      version,
      created_at: timestamp(created, h),
      updated_at: timestamp(created + 3600 * (1 + (h % 48)) + version * 86_400, mix(h, version)),
    };
  }

  #job(index: number) {
    const h = mix(this.#seed, index);
    const t = this.#times('jobs', index);
    return {
      id: this.idOf('jobs', index),
      name: `Job ${index}${t.version ? ` (rev ${t.version})` : ''}`,
      status: this.jobStatus(index),
      requisition_id: h % 5 === 0 ? null : `REQ-${h % 100_000}`,
      created_at: t.created_at,
      updated_at: t.updated_at,
    };
  }

  #jobPost(index: number) {
    const h = mix(this.#seed + 1, index);
    const t = this.#times('job_posts', index);
    return {
      id: this.idOf('job_posts', index),
      job_id: h % 6 === 0 ? null : this.idOf('jobs', h % Math.max(1, this.#counts.jobs)),
      title: `Post ${index}${t.version ? ` (rev ${t.version})` : ''}`,
      live: h % 2 === 0,
      created_at: t.created_at,
      updated_at: t.updated_at,
    };
  }

  #nested(index: number) {
    const h = mix(this.#seed + 2, index);
    const board = h % 13;
    const referrer = (h >>> 4) % 40;
    const source = (h >>> 8) % 12;
    return { h, board, referrer, source };
  }

  #trackingLink(index: number) {
    const { h, board, referrer, source } = this.#nested(index);
    const t = this.#times('tracking_links', index);
    const anonymous = h % 11 === 0;
    return {
      id: this.idOf('tracking_links', index),
      job_id: h % 5 === 0 ? null : this.idOf('jobs', h % Math.max(1, this.#counts.jobs)),
      job_post_id:
        h % 7 === 0
          ? null
          : this.idOf('job_posts', (h >>> 3) % Math.max(1, this.#counts.job_posts)),
      job_board:
        h % 9 === 0
          ? null
          : {
              id: 2_200_000_000 + board,
              company_name: `Company ${board}`,
              url_token: `company${board}`,
            },
      token: `t${this.idOf('tracking_links', index).toString(36)}`,
      related_post_id: h % 3 === 0 ? null : 8_000_000_000 + (h % 1000),
      related_post_type: h % 3 === 0 ? null : h % 2 === 0 ? 'SocialMediaPost' : 'EmailTemplate',
      credited_to:
        h % 4 === 0
          ? null
          : {
              id: anonymous ? null : 3_300_000_000 + referrer,
              name: `Referrer ${referrer}${t.version ? ` (rev ${t.version})` : ''}`,
              employee_id: referrer % 3 === 0 ? null : `E-${referrer}`,
            },
      source: h % 10 === 0 ? null : { id: 100 + source, public_name: `Source ${source}` },
      created_at: t.created_at,
      updated_at: t.updated_at,
    };
  }

  #flatTrackingLink(index: number) {
    const { h, board, referrer, source } = this.#nested(index);
    const nested = this.#trackingLink(index);
    return {
      id: nested.id,
      job_id: nested.job_id,
      job_post_id: nested.job_post_id,
      job_board_id: h % 9 === 0 ? null : 2_200_000_000 + board,
      token: nested.token,
      related_post_id: nested.related_post_id,
      related_post_type: nested.related_post_type,
      referrer_id: h % 4 === 0 || h % 11 === 0 ? null : 3_300_000_000 + referrer,
      source_id: h % 10 === 0 ? null : 100 + source,
      created_at: nested.created_at,
      updated_at: nested.updated_at,
    };
  }

  /** Malformed records rotate through the kinds a validator must catch. */
  #malformed(resource: SimResource, index: number): unknown {
    const id = this.idOf(resource, index);
    switch (Math.floor(index / Math.max(1, this.malformedEvery)) % 4) {
      case 0:
        return { id: String(id), token: 'string-id' };
      case 1:
        return {
          id,
          job_id: 'abc',
          token: 'bad-job-id',
          created_at: '2024-01-01T00:00:00Z',
          updated_at: '2024-01-01T00:00:00Z',
        };
      case 2:
        return `not an object ${id}`;
      default:
        return { token: 'no-id' };
    }
  }
}
