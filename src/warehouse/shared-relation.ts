import { quoteIdentifier } from './quote-identifier.js';

/** The schema that holds every account's rows (hiresync's own). */
export const SHARED_SCHEMA = 'hiresync';

/**
 * `"hiresync"."data_<table>"`: the shared table behind an account's relation
 * `table` (`tracking_links` → `"hiresync"."data_tracking_links"`), qualified
 * and quoted for SQL. hiresync's own statements name this, never an
 * account's view, and bind the account as a parameter in its key or filter.
 */
export function sharedRelation(table: string): string {
  return `${quoteIdentifier(SHARED_SCHEMA)}.${quoteIdentifier(`data_${table}`)}`;
}
