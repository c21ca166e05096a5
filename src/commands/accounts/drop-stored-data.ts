import type { Kysely } from 'kysely';
import { schemaOf } from '../../account-name.js';
import { UnknownAccountError } from '../../accounts/stored-account.js';
import { coerceError, HiresyncError, UsageError } from '../../errors.js';
import { schemaOwner } from '../../warehouse/layout/account-schema-owner.js';
import { allAccountsViewNames } from '../../warehouse/layout/all-accounts-views.js';
import {
  DependentObjectsError,
  dropStoredData,
} from '../../warehouse/layout/drop-account-schema.js';
import { dependentsOutside } from '../../warehouse/layout/schema-dependents.js';
import { describeStoredRows, storedRowsOf } from '../../warehouse/layout/stored-rows.js';
import type { Database } from '../../warehouse/tables.js';
import { EXIT, type Input, type Output } from '../command.js';
import { readLine } from './read-secret.js';

/** Options of {@link removeStoredData}. */
export interface RemoveStoredDataOptions {
  db: Kysely<Database>;
  /** The name, registered by no account. */
  name: string;
  /** --cascade: objects of other schemas depending on its schema may go with it. */
  cascade: boolean;
  /** Ask on the terminal first (--drop-data without --yes). */
  ask: boolean;
  stdin: Input | undefined;
  stdout: Output;
  stderr: Output;
}

/**
 * `accounts remove NAME --drop-data` of a name no account has: drops what an
 * earlier registration of it left stored (removed without --drop-data), its
 * rows of the shared tables and its schema (see {@link dropStoredData}),
 * after asking as the removal of a registered account does (`ask`; without a
 * terminal a UsageError) and refusing dependents outside the schema unless
 * `cascade`. Nothing stored under the name: UnknownAccountError.
 */
export async function removeStoredData(options: RemoveStoredDataOptions): Promise<number> {
  const { db, name, stdout, stderr } = options;
  const schema = schemaOf(name);
  const stored = await storedRowsOf(db, name);
  const owner = await schemaOwner(db, schema);
  if (stored.length === 0 && owner !== 'hiresync') throw new UnknownAccountError(name);
  const what = [
    ...(owner === 'hiresync' ? [`schema ${schema}`] : []),
    ...(stored.length > 0 ? [describeStoredRows(stored)] : []),
  ].join(' and ');
  const whose = `stored from an earlier registration of ${name} (no account ${name} is registered)`;
  if (options.ask && options.stdin?.isTTY !== true) {
    throw new UsageError(
      `--drop-data drops ${what} ${whose}, and there is no terminal to ask on: confirm with --yes (hiresync accounts remove ${name} --drop-data --yes); nothing was dropped`,
    );
  }
  let cascade: string[] = [];
  if (owner === 'hiresync') {
    const outside = await dependentsOutside(db, schema, {
      skipAllAccounts: await allAccountsViewNames(db),
    });
    if (outside.length > 0 && !options.cascade) {
      throw new HiresyncError(
        `${new DependentObjectsError(schema, outside).message}; nothing was dropped`,
      );
    }
    cascade = outside;
  }
  if (options.ask) {
    stderr.write(
      `drop ${what} ${whose}${cascade.length > 0 ? `, and outside it ${cascade.join(', ')}` : ''}? [y/N] `,
    );
    const answer = (await readLine(options.stdin, 'answer')).toLowerCase();
    if (answer !== 'y' && answer !== 'yes') {
      stderr.write('hiresync accounts remove: not confirmed; nothing was dropped\n');
      return EXIT.failed;
    }
  }
  let outcome: Awaited<ReturnType<typeof dropStoredData>>;
  try {
    outcome = await dropStoredData(db, name, { cascade });
  } catch (error) {
    throw new HiresyncError(`${coerceError(error).message}; nothing was dropped`, {
      cause: error,
    });
  }
  const also = outcome.cascaded.length > 0 ? `; also dropped: ${outcome.cascaded.join(', ')}` : '';
  const left =
    outcome.schema === 'not hiresync'
      ? `; schema ${schema} is not hiresync's and was left alone`
      : '';
  stdout.write(
    `dropped ${what} ${whose}${also}${left}; 'hiresync accounts add ${name}' now starts it empty\n`,
  );
  return EXIT.ok;
}
