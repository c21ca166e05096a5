import type { z } from 'zod';
import type { PathSetting, ResourceName, ResourceSettings, StorageKind } from '../sync/ports.js';
import { validatorFor } from './validate-record.js';

/**
 * Everything that differs between resources, declared once, as data. The
 * client, the page loop, checkpoints, the queue, the run loop, the warehouse
 * (which holds the statement of each storage kind) and the simulator (which
 * holds the simulated records, by name) are generic and take a declaration.
 */
export interface ResourceDeclaration {
  readonly name: ResourceName;
  /** One line for `--help`, the README and table comments. */
  readonly description: string;
  /** The table its records land in; full runs sweep it. */
  readonly table: string;
  /** The list path unless {@link pathVariable}'s setting gives another, e.g. `/v3/jobs`. */
  readonly defaultPath: string;
  /**
   * The setting that may override the path (named in the deletion guard's
   * hint too); undefined for a fixed path.
   */
  readonly pathVariable?: PathSetting | undefined;
  /** The list path under `settings`: {@link defaultPath} unless {@link pathVariable}'s setting gives one. */
  path(settings: ResourceSettings): string;
  /**
   * The filters of the first request (such as `status`, from {@link read}'s
   * params), unset ones left out; `per_page` and the read's constants go
   * beside them. A run with a filter marks no deletions: it does not see
   * everything.
   */
  query(settings: ResourceSettings): Readonly<Record<string, string>>;
  /** How it is read: {@link DEFAULT_READ} with what its definition overrides. */
  readonly read: ReadDeclaration;
  /** How one record is checked before it is stored. */
  readonly schema: z.ZodType;
  /** Undefined when the record can be stored, else every reason it cannot (from {@link schema}). */
  validate(record: unknown): string | undefined;
  /** How its records are stored (the warehouse's statement for that kind). */
  readonly storage: StorageKind;
  /** Where a version of each record that changed goes: `<name>_history`. */
  readonly historyTable: string;
  /** The column of `table` (and of the history table) holding the record as sent: `data` or `raw`. */
  readonly recordColumn: 'data' | 'raw';
  /** Whether a completed, unfiltered full run soft-deletes the rows it did not see. */
  readonly sweeps: boolean;
  /** Its tables are made on demand (a list resource named in HIRESYNC_RESOURCES), not by a migration. */
  readonly onDemand: boolean;
  /** Its typed view over `data` (`jobs_flat`, …); undefined for none. */
  readonly typedView?: string | undefined;
  /**
   * Top-level keys its typed view always shows, with their types, whatever
   * the data held so far (an all-null key stays `bigint`, a key no record
   * carried yet is a null column); other keys follow the data.
   */
  readonly columns: Readonly<Record<string, DeclaredColumnType>>;
}

/** The type of a column a declaration fixes in its typed view. */
export type DeclaredColumnType =
  | 'bigint'
  | 'numeric'
  | 'boolean'
  | 'timestamptz'
  | 'date'
  | 'text'
  | 'jsonb';

/** The parts of a declaration that vary; the rest is derived. */
export interface ResourceDefinition {
  name: ResourceName;
  description: string;
  table: string;
  /** The list path unless `pathVariable`'s setting gives another. */
  defaultPath: string;
  /** The setting that may override the path, if one does. */
  pathVariable?: PathSetting;
  /** What differs from {@link DEFAULT_READ}: its params, extra walks, incremental filter. */
  read?: Partial<ReadDeclaration>;
  schema: z.ZodType;
  storage: StorageKind;
  /** The column of `table` holding the record as sent: `data` (default) or `raw`. */
  recordColumn?: 'data' | 'raw';
  /** Default true. */
  sweeps?: boolean;
  /** Default false: its tables are made by a migration. */
  onDemand?: boolean;
  /** Its typed view over `data` (`jobs_flat`, …); default none. */
  typedView?: string;
  /** Keys its typed view always shows, with their types; default none. */
  columns?: Readonly<Record<string, DeclaredColumnType>>;
}

/** The settings a query parameter may be bound to, by name. */
export type QuerySetting = 'HIRESYNC_JOBS_STATUS';

/**
 * How incremental runs ask for the records changed since the last run:
 * `parameter` compared with `operator` in the API's pipe-delimited form
 * (`updated_at=gte|{since}`), `parameter` alone (`updated_after={since}`), or
 * a template holding `{since}` as HIRESYNC_UPDATED_FILTER takes it.
 */
export type IncrementalFilter =
  | { readonly parameter: string; readonly operator?: string | undefined }
  | { readonly template: string };

/** A resource's read, as data (see {@link DEFAULT_READ}). */
export interface ReadDeclaration {
  /**
   * First-request query parameters bound to settings by name
   * (`{ status: 'HIRESYNC_JOBS_STATUS' }`); an unset setting sends none.
   */
  readonly params: Readonly<Record<string, QuerySetting>>;
  /**
   * The queries of the walks a run reads after its default walk, as one run
   * (`['active=false']`); HIRESYNC_EXTRA_WALKS naming the resource replaces them.
   */
  readonly extraWalks: readonly string[];
  /**
   * Incremental runs' filter by update time; HIRESYNC_UPDATED_FILTER, when
   * set, replaces it. Undefined: incremental runs stop by id.
   */
  readonly incremental: IncrementalFilter | undefined;
  /**
   * Query parameters every walk's first request sends as they are
   * (`{ include_defaults: 'true' }`): they widen what the list shows, so a
   * run sending them still sees everything and sweeps (they are no filter).
   * Never beside a cursor: the API's `next` link carries only its cursor.
   */
  readonly constants: Readonly<Record<string, string>>;
  /**
   * The list has no filter by update time: an incremental run would see only
   * records above the highest id stored and never an update, so every run of
   * it is a full run (which sweeps). HIRESYNC_UPDATED_FILTER does not change it.
   */
  readonly everyRunFull: boolean;
}

/** The read of every resource, unless its declaration says otherwise: no params, the default walk only, no incremental filter, no constants, incremental runs when due. */
export const DEFAULT_READ: ReadDeclaration = Object.freeze({
  params: Object.freeze({}),
  extraWalks: Object.freeze([]),
  incremental: undefined,
  constants: Object.freeze({}),
  everyRunFull: false,
});

/** The value of setting `name`. */
function settingValue(name: QuerySetting, settings: ResourceSettings): string | undefined {
  switch (name) {
    case 'HIRESYNC_JOBS_STATUS':
      return settings.jobsStatus;
  }
}

/** The path a setting gives resource `name`, if it gives one. */
function settingPath(
  setting: PathSetting | undefined,
  name: ResourceName,
  settings: ResourceSettings,
): string | undefined {
  switch (setting) {
    case 'HIRESYNC_TRACKING_LINKS_PATH':
      return settings.trackingLinksPath;
    case 'HIRESYNC_RESOURCE_PATHS':
      return settings.resourcePaths?.[name];
    default:
      return undefined;
  }
}

/** Builds a declaration: the validator comes from the schema; the read is DEFAULT_READ's but what it overrides; the query drops unset values; sweeps by default; history in `<name>_history`. */
export function defineResource(definition: ResourceDefinition): ResourceDeclaration {
  const { name, defaultPath, pathVariable } = definition;
  const read: ReadDeclaration = Object.freeze({ ...DEFAULT_READ, ...definition.read });
  return Object.freeze({
    name,
    description: definition.description,
    table: definition.table,
    defaultPath,
    pathVariable,
    path: (settings: ResourceSettings) => settingPath(pathVariable, name, settings) ?? defaultPath,
    query: (settings: ResourceSettings) => {
      const out: Record<string, string> = {};
      for (const [key, setting] of Object.entries(read.params)) {
        const value = settingValue(setting, settings);
        if (value !== undefined) out[key] = value;
      }
      return out;
    },
    read,
    schema: definition.schema,
    validate: validatorFor(definition.schema),
    storage: definition.storage,
    // Named after the resource, as analysts know it: jobs_history, tracking_links_history.
    historyTable: `${name}_history`,
    recordColumn: definition.recordColumn ?? 'data',
    sweeps: definition.sweeps ?? true,
    onDemand: definition.onDemand ?? false,
    typedView: definition.typedView,
    columns: Object.freeze({ ...definition.columns }),
  });
}
