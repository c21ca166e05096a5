import type { Kysely } from 'kysely';
import { BUILT_IN_RESOURCES } from '../resources/index.js';
import { defineListResource } from '../resources/json-resource.js';
import type { ErasableResource } from '../warehouse/erase-records.js';
import { listResourcesIn } from '../warehouse/list-resource-tables.js';
import type { Database } from '../warehouse/schema.js';

/**
 * The resources whose records an account's schema holds: the built-in ones
 * (their views are in every schema), then the list resources whose views
 * were made there (`NAME_data`, `NAME_history`), by name.
 */
export async function erasableResourcesOf(
  db: Kysely<Database>,
  schema: string,
): Promise<ErasableResource[]> {
  const lists = (await listResourcesIn(db, schema)).filter((name) => !BUILT_IN_RESOURCES.has(name));
  return [...BUILT_IN_RESOURCES.values(), ...lists.map(defineListResource)];
}
