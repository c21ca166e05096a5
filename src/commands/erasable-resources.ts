import type { Kysely } from 'kysely';
import {
  BUILT_IN_RESOURCES,
  listResourceOf,
  type ResourceDeclaration,
} from '../resources/index.js';
import { listResourcesIn } from '../warehouse/layout/list-resource-tables.js';
import type { Database } from '../warehouse/tables.js';

/**
 * The resources whose records an account's schema holds: the built-in ones
 * (their views are in every schema), then the list resources whose views
 * were made there (`NAME_data`, `NAME_history`), by name. What erase and
 * reapply-policy work on.
 */
export async function erasableResourcesOf(
  db: Kysely<Database>,
  schema: string,
): Promise<ResourceDeclaration[]> {
  const lists = (await listResourcesIn(db, schema)).filter((name) => !BUILT_IN_RESOURCES.has(name));
  return [...BUILT_IN_RESOURCES.values(), ...lists.map((name) => listResourceOf(name))];
}
