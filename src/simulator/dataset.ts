/**
 * The simulator's data: deterministic records computed from their index, so a
 * dataset of millions costs no memory. Only changes made after start (removed,
 * touched or added records) are held, and those are few.
 */

import { BUILT_IN_RESOURCES, type ResourceCatalog } from '../resources/index.js';
import type { DatasetOptions } from './dataset-options.js';
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
import { malformedRecord } from './malformed-records.js';
import { recordGeneratorOf } from './simulated-records.js';
import type { SimulationContext } from './simulation-context.js';
import {
  type AdvanceReport,
  DEFAULT_WORLD_APPLICATIONS,
  WORLD_ID_BASE,
  WORLD_RESOURCES,
  World,
  worldCounts,
} from './world/world.js';
import { worldCatalogGenerators } from './world/world-catalog.js';

const WORLD_NAMES: ReadonlySet<string> = new Set(WORLD_RESOURCES);

/** A resource the simulator serves: any name its catalog declares, or an extra resource. */
export type SimResource = string;

export type { DatasetOptions } from './dataset-options.js';

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
  /** The v3 world, when served (see DatasetOptions.world). */
  readonly #world: World | undefined;

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
    const applications = options.counts?.applications ?? DEFAULT_WORLD_APPLICATIONS;
    this.#world = options.world ? new World(this.#context, applications) : undefined;
    const world = this.#world;
    const extras = extraResourcesNamed(options.extraResources ?? EXTRA_RESOURCE_NAMES).filter(
      (extra) => !this.#resources.has(extra.name) && !(world && WORLD_NAMES.has(extra.name)),
    );
    this.#extras = new Map(extras.map((extra) => [extra.name, extra]));
    const catalogBases = idBasesOf(this.#resources);
    const worldBases = world ? Object.entries(WORLD_ID_BASE) : [];
    this.#idBase =
      extras.length === 0 && !world
        ? catalogBases
        : new Map([
            ...catalogBases,
            ...extras.map((e): [string, number] => [e.name, e.idBase]),
            ...worldBases,
          ]);
    const shaped = world ? worldCatalogGenerators(() => world.state) : new Map();
    this.#generators = new Map([
      ...[...this.#resources.keys()].map(
        (name) => [name, shaped.get(name) ?? recordGeneratorOf(name)] as const,
      ),
      ...extras.map((extra) => [extra.name, extra.simulate] as const),
      ...WORLD_RESOURCES.filter(() => world !== undefined).map(
        (name) =>
          [name, (_: SimulationContext, i: number) => world?.record(name, i) ?? {}] as const,
      ),
    ]);
    const derived = world ? worldCounts(applications) : {};
    for (const name of this.#idBase.keys()) {
      if (world && WORLD_NAMES.has(name)) continue;
      const count = options.counts?.[name] ?? derived[name] ?? DEFAULT_COUNTS[name] ?? 250;
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
    if (this.#world && WORLD_NAMES.has(resource)) return this.#world.size(resource);
    return this.#counts.get(resource) ?? 0;
  }

  /** The v3 world served (DatasetOptions.world), for tests that check its rows; undefined when off. */
  get world(): World | undefined {
    return this.#world;
  }

  /**
   * Advances the v3 world to now (on the API's clock): applications move on,
   * are rejected or hired, new ones arrive, one is deleted, and every record
   * changed carries the new updated_at (see advanceWorld). Throws without a world.
   */
  advance(): AdvanceReport {
    if (!this.#world) throw new Error('this dataset serves no world (DatasetOptions.world)');
    this.version += 1;
    const report = this.#world.advance(Date.now() + this.clockSkewMs);
    // A job whose opening closed may change status: its updated_at moves, its name does not.
    for (const job of report.jobs) this.#changed('jobs').touchedAt.set(job, report.atMs);
    return report;
  }

  #inWorld(resource: SimResource): boolean {
    return this.#world !== undefined && WORLD_NAMES.has(resource);
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
      index >= 0 &&
      index < this.size(resource) &&
      !this.#changes.get(resource)?.removed.has(index) &&
      (!this.#inWorld(resource) || this.#world?.isPresent(resource, index) === true)
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
    if (this.#inWorld(resource)) {
      this.#world?.touch(resource, index, Date.now() + this.clockSkewMs);
      return this.idOf(resource, index);
    }
    const { versions, touchedAt } = this.#changed(resource);
    versions.set(index, (versions.get(index) ?? 0) + 1);
    touchedAt.set(index, Date.now() + this.clockSkewMs);
    return this.idOf(resource, index);
  }

  /** Adds `n` records newer (higher ids) than all others; returns their ids. */
  grow(resource: SimResource, n: number): number[] {
    this.version += 1;
    if (this.#inWorld(resource)) {
      if (resource !== 'applications')
        throw new Error(`the world grows applications only (advance() changes the rest)`);
      const added = this.#world?.addApplications(n, Date.now() + this.clockSkewMs) ?? [];
      return added.map((index) => this.idOf(resource, index));
    }
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
    if (this.isMalformed(index))
      return malformedRecord(this.idOf(resource, index), index, this.malformedEvery);
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
   * it asked `active=false` (`inactiveOnly`); the world's built-in rejection
   * reasons and service users only when it asked for them (`showHidden`:
   * `include_defaults=true`, `show_service_accounts=true`); every other
   * record is listed.
   */
  listed(resource: SimResource, index: number, inactiveOnly: boolean, showHidden = false): boolean {
    if (this.#inWorld(resource)) return showHidden || !this.#world?.hidden(resource, index);
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
    this.#known(resource);
    if (this.#world && WORLD_NAMES.has(resource)) return this.#world.times(resource, index);
    const h = mix(this.#seed + 11, index);
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
}
