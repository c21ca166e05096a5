import { z } from 'zod';
import type { ApiConfig } from '../config/types.js';
import { listResourceTable } from '../warehouse/list-resource-tables.js';
import { storeJsonRecords } from '../warehouse/store-json-records.js';
import {
  defineResource,
  type ResourceDeclaration,
  type ResourcePaths,
  type SimulationContext,
} from './resource.js';
import { bigintId } from './validate-record.js';

/** Records whose fields the spec does not show: only the id is checked. */
export const jsonRecordSchema = z.looseObject({ id: bigintId });

/** Options of {@link defineJsonResource}. */
export interface JsonResourceOptions {
  name: string;
  description: string;
  /** Table holding `id`, `data`, `deleted_at` and bookkeeping; default the name. */
  table?: string;
  /** List path; default `/v3/<name>`. */
  path?: (api: ResourcePaths) => string;
  /** The variable that sets `path`, if one does. */
  pathVariable?: string;
  filters?: (api: ApiConfig) => Readonly<Record<string, string | undefined>>;
  /** Default: an object with an integer id. */
  schema?: z.ZodType;
  /** Default: a record with the id and its times. */
  simulate?: (sim: SimulationContext, index: number) => Record<string, unknown>;
  /** Its tables are made on demand, not by a migration. Default false. */
  onDemand?: boolean;
}

/**
 * Any other list resource of the API, named in HIRESYNC_RESOURCES: stored as
 * sent in `NAME_data` (tables made on demand, see ensureListResources), read
 * through the view `NAME`, at `/v3/NAME` unless HIRESYNC_RESOURCE_PATHS gives
 * its path.
 */
export function defineListResource(name: string): ResourceDeclaration {
  return defineJsonResource({
    name,
    description: `${name}, a list of the API stored as sent (named in HIRESYNC_RESOURCES)`,
    table: listResourceTable(name),
    path: (api) => api.resourcePaths?.[name] ?? `/v3/${name}`,
    pathVariable: 'HIRESYNC_RESOURCE_PATHS',
    onDemand: true,
  });
}

/**
 * A resource stored as JSON, like jobs: one row per id with the record as
 * sent in `data`. Adding one is this declaration plus a migration creating its
 * table (see the README, "Adding a resource").
 */
export function defineJsonResource(options: JsonResourceOptions): ResourceDeclaration {
  const table = options.table ?? options.name;
  return defineResource({
    name: options.name,
    description: options.description,
    table,
    path: options.path ?? (() => `/v3/${options.name}`),
    pathVariable: options.pathVariable,
    filters: options.filters,
    schema: options.schema ?? jsonRecordSchema,
    write: storeJsonRecords(table),
    onDemand: options.onDemand,
    typedView: `${options.name}_flat`,
    simulate:
      options.simulate ??
      ((sim, index) => ({ id: sim.idOf(options.name, index), ...sim.times(options.name, index) })),
  });
}
