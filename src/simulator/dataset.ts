/**
 * The simulator's data: deterministic records computed from their index, so a
 * dataset of millions costs no memory. Only changes made after start (removed,
 * touched or added records) are held, and those are few.
 */

import { BUILT_IN_RESOURCES, type ResourceCatalog } from '../resources/index.js';
import {
  BUILT_IN_ID_BASE,
  DEFAULT_COUNTS,
  EPOCH_S,
  ID_RANGE,
  ID_STEP,
  idBasesOf,
  isoMicros,
  mix,
  timestamp,
} from './dataset-values.js';
import { type DateBound, withinDates } from './date-bounds.js';
import type { ExtraResource } from './extra-resource.js';
import { EXTRA_RESOURCE_NAMES, EXTRA_RESOURCES, extraResourcesNamed } from './extra-resources.js';
import { recordGeneratorOf } from './simulated-records.js';
import type { SimulationContext } from './simulation-context.js';

/** A resource the simulator serves: any name its catalog declares, or an extra resource. */
export type SimResource = string;

/** Options of {@link Dataset}. */
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
}

/** What changed in one resource after start; made on its first change (most datasets have none). */
interface ResourceChanges {
  readonly removed: Set<number>;
  readonly versions: Map<number, number>;
  /** When each record changed after start (touch), in ms: its updated_at from then on. */
  readonly touchedAt: Map<number, number>;
  /** Records added after start (grow), as batches: indexes from `from` on were created at `at` ms. */
  readonly grown: Array<{ from: number; at: number }>;
}

export class Dataset {
  readonly flatTrackingLinks: boolean;
  /** See DatasetOptions.hideInactiveJobPosts. */
  readonly hideInactiveJobPosts: boolean;
  readonly malformedEvery: number;
  readonly nulEvery: number;
  /** The API's clock less real time, in ms (see DatasetOptions.clockSkewMs). */
  readonly clockSkewMs: number;
  /** Bumped by every change, so cached pages of an older version are not served. */
  version = 0;
  readonly #seed: number;
  readonly #idOffset: number;
  readonly #resources: ResourceCatalog;
  /** Extra resources held, those the catalog declares left out. */
  readonly #extras: ReadonlyMap<SimResource, ExtraResource>;
  readonly #idBase: ReadonlyMap<SimResource, number>;
  /** How each resource served builds its records. */
  readonly #generators: ReadonlyMap<SimResource, ExtraResource['simulate']>;
  readonly #counts = new Map<SimResource, number>();
  /** Records of each resource when the dataset was made. */
  readonly #startSizes = new Map<SimResource, number>();
  /** Only resources changed after start have an entry. */
  readonly #changes = new Map<SimResource, ResourceChanges>();
  #contextMemo: SimulationContext | undefined;

  constructor(options: DatasetOptions = {}) {
    this.#seed = options.seed ?? 1;
    this.#idOffset = options.idOffset ?? 0;
    if (!Number.isSafeInteger(this.#idOffset) || this.#idOffset < 0 || this.#idOffset >= ID_RANGE)
      throw new RangeError(`idOffset must be a whole number from 0 below ${ID_RANGE}`);
    this.flatTrackingLinks = options.flatTrackingLinks ?? false;
    this.hideInactiveJobPosts = options.hideInactiveJobPosts ?? false;
    this.malformedEvery = options.malformedEvery ?? 0;
    this.nulEvery = options.nulEvery ?? 0;
    this.clockSkewMs = options.clockSkewMs ?? 0;
    this.#resources = options.resources ?? BUILT_IN_RESOURCES;
    const extras = extraResourcesNamed(options.extraResources ?? EXTRA_RESOURCE_NAMES).filter(
      (extra) => !this.#resources.has(extra.name),
    );
    this.#extras = new Map(extras.map((extra) => [extra.name, extra]));
    const catalogBases = idBasesOf(this.#resources);
    this.#idBase =
      extras.length === 0
        ? catalogBases
        : new Map([...catalogBases, ...extras.map((e): [string, number] => [e.name, e.idBase])]);
    this.#generators = new Map([
      ...[...this.#resources.keys()].map((name) => [name, recordGeneratorOf(name)] as const),
      ...extras.map((extra) => [extra.name, extra.simulate] as const),
    ]);
    for (const name of this.#idBase.keys()) {
      const count = options.counts?.[name] ?? DEFAULT_COUNTS[name] ?? 250;
      this.#counts.set(name, count);
      this.#startSizes.set(name, count);
    }
  }

  /** What a resource's record generator builds its records from (made on first use). */
  get #context(): SimulationContext {
    this.#contextMemo ??= {
      seed: this.#seed,
      flat: this.flatTrackingLinks,
      mix,
      idOf: (resource, index) => this.#referencedId(resource, index),
      size: (resource) => this.size(resource),
      times: (resource, index) => this.#times(resource, index),
      startSize: (resource) => this.#startSizes.get(resource) ?? 0,
    };
    return this.#contextMemo;
  }

  /** The declared resources served (the extra ones are in {@link Dataset.extraResources}). */
  get resources(): ResourceCatalog {
    return this.#resources;
  }

  /** The extra resources served: those named by the options that the catalog does not declare. */
  get extraResources(): ReadonlyMap<SimResource, ExtraResource> {
    return this.#extras;
  }

  /** Whether the dataset holds `resource`, declared or extra. */
  serves(resource: SimResource): boolean {
    return this.#idBase.has(resource);
  }

  #of<T>(map: ReadonlyMap<SimResource, T>, resource: SimResource): T {
    const value = map.get(resource);
    if (value === undefined) throw new Error(`the simulator serves no resource ${resource}`);
    return value;
  }

  /** Number of index slots (removed ones included). */
  size(resource: SimResource): number {
    return this.#counts.get(resource) ?? 0;
  }

  /** Throws on a resource the catalog lacks. */
  #known(resource: SimResource): void {
    this.#of(this.#idBase, resource);
  }

  /** The changes of `resource`, made on its first change. */
  #changed(resource: SimResource): ResourceChanges {
    this.#known(resource);
    let changes = this.#changes.get(resource);
    if (!changes) {
      changes = { removed: new Set(), versions: new Map(), touchedAt: new Map(), grown: [] };
      this.#changes.set(resource, changes);
    }
    return changes;
  }

  idOf(resource: SimResource, index: number): number {
    return this.#of(this.#idBase, resource) + this.#idOffset + index * ID_STEP;
  }

  /**
   * The id a record refers to: of a resource held, or else of a built-in or
   * extra resource this dataset does not hold (an applications-only dataset's
   * candidate_id still names a candidate); throws on any other name.
   */
  #referencedId(resource: SimResource, index: number): number {
    const base =
      this.#idBase.get(resource) ??
      BUILT_IN_ID_BASE[resource] ??
      EXTRA_RESOURCES.get(resource)?.idBase;
    if (base === undefined) throw new Error(`the simulator serves no resource ${resource}`);
    return base + this.#idOffset + index * ID_STEP;
  }

  /** Index of the highest slot whose id is strictly below `id` (may be -1). */
  indexBelow(resource: SimResource, id: number): number {
    const first = this.#of(this.#idBase, resource) + this.#idOffset;
    const index = Math.ceil((id - first) / ID_STEP) - 1;
    return Math.min(index, this.size(resource) - 1);
  }

  isPresent(resource: SimResource, index: number): boolean {
    return (
      index >= 0 && index < this.size(resource) && !this.#changes.get(resource)?.removed.has(index)
    );
  }

  /** Removes a record: the next full sync should soft-delete it. */
  remove(resource: SimResource, index: number): number {
    this.version += 1;
    this.#changed(resource).removed.add(index);
    return this.idOf(resource, index);
  }

  /** Brings back a removed record, unchanged: the next full sync should undelete it. */
  restore(resource: SimResource, index: number): number {
    this.version += 1;
    this.#changed(resource).removed.delete(index);
    return this.idOf(resource, index);
  }

  /** Changes a record (new updated_at and content): the next full sync should pick it up. */
  touch(resource: SimResource, index: number): number {
    this.version += 1;
    const { versions, touchedAt } = this.#changed(resource);
    versions.set(index, (versions.get(index) ?? 0) + 1);
    touchedAt.set(index, Date.now() + this.clockSkewMs);
    return this.idOf(resource, index);
  }

  /** Adds `n` records newer (higher ids) than all others; returns their ids. */
  grow(resource: SimResource, n: number): number[] {
    this.version += 1;
    const start = this.size(resource);
    this.#changed(resource).grown.push({ from: start, at: Date.now() + this.clockSkewMs });
    this.#counts.set(resource, start + n);
    return Array.from({ length: n }, (_, k) => this.idOf(resource, start + k));
  }

  /** True when the record at `index` is deliberately malformed. */
  isMalformed(index: number): boolean {
    return this.malformedEvery > 0 && index % this.malformedEvery === this.malformedEvery - 1;
  }

  /** Every present index, descending (the API's order). For tests that compare tables with the data. */
  *presentIndexes(resource: SimResource): Generator<number> {
    for (let i = this.size(resource) - 1; i >= 0; i -= 1) if (this.isPresent(resource, i)) yield i;
  }

  /** The record at `index` as the API would send it (a malformed one included). */
  record(resource: SimResource, index: number): unknown {
    if (this.isMalformed(index)) return this.#malformed(resource, index);
    let record = this.#of(this.#generators, resource)(this.#context, index);
    if (this.#hidesInactive(resource))
      record = { ...record, active: !this.isInactive(resource, index) };
    return this.hasNul(index) ? { ...record, note: `NUL \u0000 inside ${index}` } : record;
  }

  #hidesInactive(resource: SimResource): boolean {
    return this.hideInactiveJobPosts && resource === 'job_posts';
  }

  /** Whether the record at `index` is an inactive job post (only with `hideInactiveJobPosts`). */
  isInactive(resource: SimResource, index: number): boolean {
    return this.#hidesInactive(resource) && index % 7 === 6;
  }

  /**
   * Whether a walk lists the record at `index`: with `hideInactiveJobPosts`,
   * a job_posts walk lists the active posts, or only the inactive ones when
   * it asked `active=false` (`inactiveOnly`); every other record is listed.
   */
  listed(resource: SimResource, index: number, inactiveOnly: boolean): boolean {
    if (!this.#hidesInactive(resource)) return true;
    return this.isInactive(resource, index) === inactiveOnly;
  }

  /** True when the record at `index` carries a `\u0000` (and is not malformed otherwise). */
  hasNul(index: number): boolean {
    return (
      this.nulEvery > 0 && index % this.nulEvery === this.nulEvery - 2 && !this.isMalformed(index)
    );
  }

  /** Whether the record at `index` passes a list filter such as `status=closed` (a malformed one never does). */
  matches(
    resource: SimResource,
    index: number,
    filters: Readonly<Record<string, string>>,
  ): boolean {
    const entries = Object.entries(filters);
    if (entries.length === 0) return true;
    const record = this.record(resource, index);
    if (typeof record !== 'object' || record === null || this.isMalformed(index)) return false;
    return entries.every(
      ([key, value]) => String((record as Record<string, unknown>)[key]) === value,
    );
  }

  /**
   * Times of the record at `index`. Records of the start are dated 2024 on;
   * a record added (grow) or changed (touch) after start carries the wall-clock
   * time of that change, so an `updated_at=gte|…` filter finds exactly them.
   */
  #times(resource: SimResource, index: number) {
    const h = mix(this.#seed + 11, index);
    this.#known(resource);
    const changes = this.#changes.get(resource);
    const version = changes?.versions.get(index) ?? 0;
    const grownAt = changes?.grown.findLast((b) => index >= b.from)?.at;
    const touchedAt = changes?.touchedAt.get(index);
    const created = EPOCH_S + index * 60;
    const createdAt = grownAt === undefined ? timestamp(created, h) : isoMicros(grownAt, h);
    const changedAt = touchedAt ?? grownAt;
    return {
      version,
      created_at: createdAt,
      updated_at:
        changedAt === undefined
          ? timestamp(created + 3600 * (1 + (h % 48)) + version * 86_400, mix(h, version))
          : isoMicros(changedAt, mix(h, version)),
    };
  }

  /**
   * Whether the record at `index` is within every bound of `dates`
   * (`updated_at=gte|…`, `created_at=lt|…`); a malformed one never is.
   */
  withinDates(resource: SimResource, index: number, dates: readonly DateBound[]): boolean {
    if (dates.length === 0) return true;
    if (this.isMalformed(index)) return false;
    return withinDates(this.#times(resource, index), dates);
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
