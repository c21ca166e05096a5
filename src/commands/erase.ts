import { type Kysely, sql } from 'kysely';
import { DEFAULT_ACCOUNT } from '../account-name.js';
import { formatDuration } from '../config/fields.js';
import { loadDatabaseConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { BUILT_IN_RESOURCES } from '../resources/index.js';
import type { Database } from '../warehouse/tables.js';
import { deletionCutoff, eraseDeletedRecords } from '../warehouse/upkeep/erase-deleted.js';
import {
  assertErasureLog,
  type ErasedRecord,
  eraseRecords,
  ResourceBusyError,
} from '../warehouse/upkeep/erase-records.js';
import { openCheckedDatabase } from './checked-database.js';
import { defineCommand, EXIT, type Output } from './command.js';
import { erasableResourcesOf } from './erasable-resources.js';
import { type EraseRequest, options, parseEraseRequest } from './erase-options.js';

export { options } from './erase-options.js';

/** `N thing(s)`, the plural by `s`. */
function count(n: number, thing: string): string {
  return `${n} ${thing}${n === 1 ? '' : 's'}`;
}

/** One line per erased id: what was found, and its row in hiresync.erasures. */
export function formatErased(record: ErasedRecord): string {
  const found = `row ${record.rows > 0 ? 'yes' : 'no'}, ${count(record.historyVersions, 'history version')}, ${count(record.rejectedRecords, 'rejected record')}`;
  const nothing =
    record.rows + record.historyVersions + record.rejectedRecords === 0
      ? ': nothing of it was stored; the request is logged'
      : '';
  return `  id ${record.id}: ${found}${nothing} (erasure ${record.erasureId})`;
}

/** The schema of `account`'s views of shared storage; a UsageError when it has none. */
async function schemaOfAccount(db: Kysely<Database>, account: string): Promise<string> {
  const { rows } = await sql<{ schema: string }>`
    select schema from hiresync.schema_layouts where account = ${account}`.execute(db);
  const schema = rows[0]?.schema;
  if (schema === undefined) {
    throw new UsageError(
      `account ${account} has no data in this database (${account === DEFAULT_ACCOUNT ? "run 'hiresync migrate'" : "not registered, or removed with --drop-data; see 'hiresync accounts list'"}): nothing was erased`,
    );
  }
  return schema;
}

/** `erase --id`: one transaction for the ids of one resource of one account. */
async function eraseIds(
  db: Kysely<Database>,
  request: Extract<EraseRequest, { mode: 'ids' }>,
  stdout: Output,
): Promise<number> {
  const schema = await schemaOfAccount(db, request.account);
  const resources = await erasableResourcesOf(db, schema);
  const resource = resources.find((r) => r.name === request.resource);
  if (!resource) {
    throw new UsageError(
      `account ${request.account} has no resource ${request.resource} (none of its records were ever stored): its resources are ${resources.map((r) => r.name).join(', ')}; nothing was erased`,
    );
  }
  const erased = await eraseRecords(db, {
    account: request.account,
    resource,
    waitMs: request.waitMs,
    ids: request.ids,
    origin: 'command',
    note: request.note,
  });
  stdout.write(
    `erased ${count(erased.length, 'record')} of ${resource.name}, account ${request.account}, in one transaction, each logged in hiresync.erasures:\n${erased.map(formatErased).join('\n')}\n`,
  );
  return EXIT.ok;
}

/** `erase --deleted-before`: the records deleted upstream before then, per account and resource. */
async function eraseDeleted(
  db: Kysely<Database>,
  request: Extract<EraseRequest, { mode: 'deleted' }>,
  stdout: Output,
  stderr: Output,
): Promise<number> {
  if (request.accounts) {
    for (const account of request.accounts) await schemaOfAccount(db, account);
  }
  for (const name of request.resources ?? []) {
    if (BUILT_IN_RESOURCES.has(name)) continue;
    // A list resource's shared table exists once any account has stored it.
    const { rows } = await sql<{ present: boolean }>`
      select to_regclass(${`hiresync.data_${name}_data`}) is not null as present`.execute(db);
    if (!rows[0]?.present) {
      throw new UsageError(
        `no account has a resource ${name} (none of its records were ever stored): nothing was erased`,
      );
    }
  }
  const before = await deletionCutoff(db, request.afterMs);
  const reason = `deleted upstream before ${before} (hiresync erase --deleted-before ${formatDuration(request.afterMs)})`;
  const results = await eraseDeletedRecords(db, {
    before,
    note: request.note ? `${reason}: ${request.note}` : reason,
    waitMs: request.waitMs,
    accounts: request.accounts,
    resources: request.resources,
    resourcesOf: ({ schema }) => erasableResourcesOf(db, schema),
    onResult: (r) => {
      if (r.records === 0 && !r.problem) return;
      const what = `${r.account}/${r.resource}: ${count(r.records, 'record')} erased (${count(r.rows, 'row')}, ${count(r.historyVersions, 'history version')}, ${count(r.rejectedRecords, 'rejected record')})`;
      stdout.write(`${what}${r.problem ? `; stopped short: ${r.problem.message}` : ''}\n`);
    },
  });
  const erased = results.reduce((n, r) => n + r.records, 0);
  const accounts = new Set(results.map((r) => r.account)).size;
  stdout.write(
    `erased ${count(erased, 'record')} deleted upstream before ${before}, of ${count(accounts, 'account')} (${count(results.length, 'resource')} looked at), each logged in hiresync.erasures\n`,
  );
  const short = results.filter((r) => r.problem);
  if (short.length === 0) return EXIT.ok;
  stderr.write(
    `hiresync erase: ${short.length} of them stopped short (see above); run it again to erase the rest\n`,
  );
  return EXIT.failed;
}

/** `hiresync erase`: removes every trace of records (row, history, rejected records), logged. */
export const erase = defineCommand({
  name: 'erase',
  description: `Erases records: for each id of --resource of --account (default default),
    its row, every version of it in the resource's history (<resource>_history) and the
    rejected records of the resource that carry its id, in one transaction, and logs
    each id in hiresync.erasures (account, resource, id, time, what was removed, the
    --note; never any content). An id with nothing stored is logged too (counts 0). A
    later run that is served the record again stores it afresh. Waits up to --wait for a
    sync run of the resource in progress to end (a run holds its resource to its end).

    With --deleted-before D instead of --id: erases the records deleted upstream (their
    deleted_at) longer ago than D, of every account and resource or those named, in
    transactions of 1,000 ids, as the worker does daily with HIRESYNC_ERASE_DELETED_AFTER.

    Needs DATABASE_URL. Exit 0 when erased; 1 when a run held the resource past --wait
    (nothing of it erased) or Postgres fails; 2 on a bad id, a name that cannot be an
    account or resource, or an account or resource this database holds nothing of.`,
  options,
  async execute(values, { env, stdout, stderr }) {
    const request = parseEraseRequest(values);
    const config = loadDatabaseConfig(env);
    const db = await openCheckedDatabase(config.databaseUrl, 'hiresync erase', assertErasureLog);
    try {
      return request.mode === 'ids'
        ? await eraseIds(db, request, stdout)
        : await eraseDeleted(db, request, stdout, stderr);
    } catch (error) {
      if (!(error instanceof ResourceBusyError)) throw error;
      stderr.write(`hiresync erase: ${error.message}\n`);
      return EXIT.failed;
    } finally {
      await db.destroy();
    }
  },
});
