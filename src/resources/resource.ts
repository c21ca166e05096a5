import type { z } from 'zod';
import type { ApiConfig } from '../config/types.js';
import type { ResourceName } from '../sync/ports.js';
import type { PageStatement, StoredResource } from '../warehouse/page-statement.js';
import { validatorFor } from './validate-record.js';

/** What decides the list paths: the configuration, or the simulator's own options. */
export type ResourcePaths = Pick<ApiConfig, 'trackingLinksPath'> &
  Partial<Pick<ApiConfig, 'resourcePaths'>>;

/** What the simulator gives a resource to build its records from. */
export interface SimulationContext {
  /** Seed of every generated value. */
  readonly seed: number;
  /** A stable 32-bit mix of two numbers: the source of every generated value. */
  mix(a: number, b: number): number;
  /** Send tracking links flat (`job_board_id`, `source_id`, `referrer_id`). */
  readonly flat: boolean;
  /** The id of the record at `index` of a resource (ids of other resources included). */
  idOf(resource: string, index: number): number;
  /** Records of a resource (index slots, removed ones included). */
  size(resource: string): number;
  /** Creation and update times of the record at `index`, and how often it changed. */
  times(
    resource: string,
    index: number,
  ): { version: number; created_at: string; updated_at: string };
}

/**
 * Everything that differs between resources, declared once. The client, the
 * page loop, checkpoints, the queue, the run loop and the sweep are generic
 * and take a declaration.
 */
export interface ResourceDeclaration extends StoredResource {
  readonly name: ResourceName;
  /** One line for `--help`, the README and table comments. */
  readonly description: string;
  /** The list path, e.g. `/v3/jobs` (some paths are configurable). */
  path(api: ResourcePaths): string;
  /**
   * Query parameters of the first request besides `per_page` (filters such as
   * `status`). A run with a filter marks no deletions: it does not see
   * everything.
   */
  filters(api: ApiConfig): Readonly<Record<string, string>>;
  /** How one record is checked before it is stored. */
  readonly schema: z.ZodType;
  /** The record at `index` as the built-in simulator serves it. */
  simulate(sim: SimulationContext, index: number): Record<string, unknown>;
}

/** The parts of a declaration that vary; the rest is derived. */
export interface ResourceDefinition {
  name: ResourceName;
  description: string;
  table: string;
  path: (api: ResourcePaths) => string;
  /** The variable that sets `path`, if one does (named in the deletion guard's hint). */
  pathVariable?: string;
  filters?: (api: ApiConfig) => Readonly<Record<string, string | undefined>>;
  schema: z.ZodType;
  write: PageStatement;
  /** The column of `table` holding the record as sent: `data` (default) or `raw`. */
  recordColumn?: 'data' | 'raw';
  sweeps?: boolean;
  /** Its tables are made on demand (a list resource named in HIRESYNC_RESOURCES). Default false: by a migration. */
  onDemand?: boolean;
  /** Its typed view over `data` (`jobs_flat`, …); default none. */
  typedView?: string;
  simulate: (sim: SimulationContext, index: number) => Record<string, unknown>;
}

/** Builds a declaration: the validator comes from the schema; filters drop unset values; sweeps by default; history in `<name>_history`. */
export function defineResource(definition: ResourceDefinition): ResourceDeclaration {
  const validate = validatorFor(definition.schema);
  return Object.freeze({
    name: definition.name,
    description: definition.description,
    table: definition.table,
    path: definition.path,
    pathVariable: definition.pathVariable,
    filters: (api: ApiConfig) => {
      const out: Record<string, string> = {};
      for (const [key, value] of Object.entries(definition.filters?.(api) ?? {})) {
        if (value !== undefined) out[key] = value;
      }
      return out;
    },
    schema: definition.schema,
    validate,
    write: definition.write,
    // Named after the resource, as analysts know it: jobs_history, tracking_links_history.
    historyTable: `${definition.name}_history`,
    recordColumn: definition.recordColumn ?? 'data',
    sweeps: definition.sweeps ?? true,
    onDemand: definition.onDemand ?? false,
    typedView: definition.typedView,
    simulate: definition.simulate,
  });
}
