import type { Kysely } from 'kysely';
import { schemaOf } from '../account-name.js';
import { coerceError, HiresyncError } from '../errors.js';
import { schemaOwner } from '../warehouse/layout/account-schema-owner.js';
import { allAccountsViewNames } from '../warehouse/layout/all-accounts-views.js';
import { dropStoredData } from '../warehouse/layout/drop-account-schema.js';
import { dependentsOutside } from '../warehouse/layout/schema-dependents.js';
import { describeStoredRows, storedRowsOf } from '../warehouse/layout/stored-rows.js';
import type { Database } from '../warehouse/tables.js';
import type { RemovalRefusal, RemovalRequest } from './removal-request.js';

/** What became of dropping what an earlier registration of a name left stored. */
export type DropLeftDataOutcome =
  /** Dropped: `what` (`schema acme and 1,204 tracking_links, …`), and objects outside it. */
  | {
      kind: 'left data dropped';
      name: string;
      what: string;
      cascaded: string[];
      /** A schema of the name that is not hiresync's, left alone (only its shared rows went). */
      schemaLeftAlone: boolean;
    }
  /** Nothing is stored under the name, and no account has it. */
  | { kind: 'unknown'; name: string }
  | RemovalRefusal;

/**
 * `accounts remove NAME --drop-data` of a name no account has: drops what an
 * earlier registration of it left stored (removed without --drop-data), its
 * rows of the shared tables and its schema (see dropStoredData), once agreed
 * to as the removal of a registered account is (`consent`), refusing
 * dependents outside the schema unless `cascade`. A failing drop is thrown
 * (nothing dropped).
 */
export async function dropLeftData(
  db: Kysely<Database>,
  request: RemovalRequest,
): Promise<DropLeftDataOutcome> {
  const { name } = request;
  const schema = schemaOf(name);
  const stored = await storedRowsOf(db, name);
  const owner = await schemaOwner(db, schema);
  if (stored.length === 0 && owner !== 'hiresync') return { kind: 'unknown', name };
  const what = [
    ...(owner === 'hiresync' ? [`schema ${schema}`] : []),
    ...(stored.length > 0 ? [describeStoredRows(stored)] : []),
  ].join(' and ');
  if (request.consent === 'no terminal') {
    return { kind: 'no terminal', of: 'left data', name, dropping: what };
  }
  let cascade: string[] = [];
  if (owner === 'hiresync') {
    cascade = await dependentsOutside(db, schema, {
      skipAllAccounts: await allAccountsViewNames(db),
    });
    if (cascade.length > 0 && !request.cascade) {
      return { kind: 'dependents', of: 'left data', name, schema, objects: cascade };
    }
  }
  if (typeof request.consent === 'function') {
    if (!(await request.consent({ of: 'left data', name, what, cascade }))) {
      return { kind: 'not confirmed', of: 'left data', name };
    }
  }
  try {
    const dropped = await dropStoredData(db, name, { cascade });
    return {
      kind: 'left data dropped',
      name,
      what,
      cascaded: dropped.cascaded,
      schemaLeftAlone: dropped.schema === 'not hiresync',
    };
  } catch (error) {
    throw new HiresyncError(`${coerceError(error).message}; nothing was dropped`, {
      cause: error,
    });
  }
}
