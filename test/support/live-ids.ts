import type { Kysely } from 'kysely';
import type { Database } from '../../src/warehouse/tables.js';

/** The ids of the live rows (not soft-deleted) of `resource` in `db`'s public views, highest first. */
export async function liveIdsIn(db: Kysely<Database>, resource: string): Promise<string[]> {
  const rows = await db
    .withSchema('public')
    .selectFrom(resource as 'jobs')
    .select('id')
    .where('deleted_at', 'is', null)
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => r.id);
}
