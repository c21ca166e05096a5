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
   * Query parameters of the first request besides `per_page` (filters such as
   * `status`), unset ones left out. A run with a filter marks no deletions:
   * it does not see everything.
   */
  query(settings: ResourceSettings): Readonly<Record<string, string>>;
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
}

/** The parts of a declaration that vary; the rest is derived. */
export interface ResourceDefinition {
  name: ResourceName;
  description: string;
  table: string;
  /** The list path unless `pathVariable`'s setting gives another. */
  defaultPath: string;
  /** The setting that may override the path, if one does. */
  pathVariable?: PathSetting;
  /** First-page query parameters from the settings; undefined values are left out. Default none. */
  query?: (settings: ResourceSettings) => Readonly<Record<string, string | undefined>>;
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

/** Builds a declaration: the validator comes from the schema; the query drops unset values; sweeps by default; history in `<name>_history`. */
export function defineResource(definition: ResourceDefinition): ResourceDeclaration {
  const { name, defaultPath, pathVariable } = definition;
  return Object.freeze({
    name,
    description: definition.description,
    table: definition.table,
    defaultPath,
    pathVariable,
    path: (settings: ResourceSettings) => settingPath(pathVariable, name, settings) ?? defaultPath,
    query: (settings: ResourceSettings) => {
      const out: Record<string, string> = {};
      for (const [key, value] of Object.entries(definition.query?.(settings) ?? {})) {
        if (value !== undefined) out[key] = value;
      }
      return out;
    },
    schema: definition.schema,
    validate: validatorFor(definition.schema),
    storage: definition.storage,
    // Named after the resource, as analysts know it: jobs_history, tracking_links_history.
    historyTable: `${name}_history`,
    recordColumn: definition.recordColumn ?? 'data',
    sweeps: definition.sweeps ?? true,
    onDemand: definition.onDemand ?? false,
    typedView: definition.typedView,
  });
}
