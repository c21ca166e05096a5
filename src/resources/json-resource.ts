import { z } from 'zod';
import type { PathSetting } from '../sync/ports.js';
import {
  type DeclaredColumnType,
  defineResource,
  type ReadDeclaration,
  type ResourceDeclaration,
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
  /** The list path unless `pathVariable`'s setting gives another; default `/v3/<name>`. */
  defaultPath?: string;
  /** The setting that may override the path, if one does. */
  pathVariable?: PathSetting;
  /** What its read changes of DEFAULT_READ (params, extra walks, incremental filter); default nothing. */
  read?: Partial<ReadDeclaration>;
  /** Default: an object with an integer id. */
  schema?: z.ZodType;
  /** Its tables are made on demand, not by a migration. Default false. */
  onDemand?: boolean;
  /** Keys its typed view always shows, with their types; default none. */
  columns?: Readonly<Record<string, DeclaredColumnType>>;
}

/** What a list resource may declare besides its name (see {@link defineListResource}). */
export type ListResourceOptions = Pick<
  JsonResourceOptions,
  'description' | 'read' | 'schema' | 'columns'
>;

/**
 * Any other list resource of the API, named in HIRESYNC_RESOURCES: stored as
 * sent in `NAME_data` (tables made on demand by the warehouse, see
 * ensureListResources and listResourceTable), read through the view `NAME`,
 * at `/v3/NAME` unless HIRESYNC_RESOURCE_PATHS gives its path. A list hiresync
 * knows (the analytics resources) declares its description, read, schema and
 * typed columns too; its storage stays the same.
 */
export function defineListResource(
  name: string,
  options: Partial<ListResourceOptions> = {},
): ResourceDeclaration {
  return defineJsonResource({
    name,
    description:
      options.description ??
      `${name}, a list of the API stored as sent (named in HIRESYNC_RESOURCES)`,
    table: `${name}_data`,
    pathVariable: 'HIRESYNC_RESOURCE_PATHS',
    onDemand: true,
    read: options.read,
    schema: options.schema,
    columns: options.columns,
  });
}

/**
 * A resource stored as JSON, like jobs: one row per id with the record as
 * sent in `data`. Adding one is this declaration plus a migration creating its
 * table (see docs/layout.md, "Adding a resource").
 */
export function defineJsonResource(options: JsonResourceOptions): ResourceDeclaration {
  return defineResource({
    name: options.name,
    description: options.description,
    table: options.table ?? options.name,
    defaultPath: options.defaultPath ?? `/v3/${options.name}`,
    pathVariable: options.pathVariable,
    read: options.read,
    schema: options.schema ?? jsonRecordSchema,
    storage: 'json',
    onDemand: options.onDemand,
    typedView: `${options.name}_flat`,
    columns: options.columns,
  });
}
