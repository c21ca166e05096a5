import { sql, type Transaction } from 'kysely';
import { LOCK_SPACE, lockKey } from '../lock-keys.js';
import { sharedRelation } from '../shared-relation.js';
import type { Database } from '../tables.js';
import {
  accountViewsText,
  ident,
  literal,
  sharedTable,
  sharedTables,
  typedViewPlaceholderText,
} from './account-views.js';

type Trx = Transaction<Database>;

/**
 * The comment that marks `NAME_data` as the table of a list resource named
 * in HIRESYNC_RESOURCES (not a migration's): how hiresync finds them again
 * (`migrate`, `accounts add`, the all_accounts views) without configuration.
 */
export const LIST_RESOURCE_MARKER = 'hiresync list resource';

/** The relation holding a list resource's records, as sent. */
export function listResourceTable(name: string): string {
  return `${name}_data`;
}

/** Second key of the advisory lock under which list resources' relations are made. */
export const LIST_RESOURCES_LOCK = lockKey('list resource tables');

/** Partitions of each shared table (as migration hiresync/0009 makes them). */
const PARTITIONS = 8;

/**
 * Makes the shared tables of list resource `name`, where missing:
 * `hiresync.data_NAME_data` (the shape of `hiresync.data_jobs`) and
 * `hiresync.data_NAME_history` (that of `data_jobs_history`), each
 * hash-partitioned on account as every shared table. Returns true when it
 * made them. Serialised with every other making of list resources' relations
 * (ensureListResources, the move of an earlier layout) by their lock.
 */
export async function createSharedListTables(trx: Trx, name: string): Promise<boolean> {
  await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${LIST_RESOURCES_LOCK}::int)`.execute(
    trx,
  );
  const data = sharedTable(listResourceTable(name));
  const history = sharedTable(`${name}_history`);
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass(${`hiresync.${data}`}) is not null as present`.execute(trx);
  if (rows[0]?.present) return false;
  for (const [table, like, key, fillfactor] of [
    [data, 'data_jobs', 'account, id', ' with (fillfactor = 80)'],
    [history, 'data_jobs_history', 'account, id, valid_from', ''],
  ] as const) {
    await sql
      .raw(`create table hiresync.${ident(table)} (
        like hiresync.${ident(like)} including defaults including constraints,
        primary key (${key})
      ) partition by hash (account)`)
      .execute(trx);
    const partitions = Array.from(
      { length: PARTITIONS },
      (_, i) =>
        `create table hiresync.${ident(`${table}_p${String(i).padStart(2, '0')}`)} partition of hiresync.${ident(table)} for values with (modulus ${PARTITIONS}, remainder ${i})${fillfactor}`,
    );
    await sql.raw(`${partitions.join(';\n')};`).execute(trx);
  }
  const shared = `\n\nShared storage: every account's ${name} records (hash-partitioned on account into ${PARTITIONS} partitions); each account reads its own through the views of its schema, all accounts through all_accounts.${name}.`;
  const notes: Record<string, Record<string, string>> = {
    [data]: {
      '': `${LIST_RESOURCE_MARKER} ${name}: one row per ${name} record id, the record as the API sent it (list ${name}, named in HIRESYNC_RESOURCES). Read it through the view ${name}.${shared}`,
      account: 'The account the row belongs to.',
      id: 'Record id (API).',
      data: 'The record exactly as the API last sent it.',
      deleted_at:
        'Set when a completed full sync no longer saw the record (soft delete); cleared when seen again.',
      changed_at: `When the current version began (valid_from of its open version in ${name}_history).`,
      first_synced_at: 'When hiresync first stored this record.',
      synced_at: 'When hiresync last wrote this row.',
      last_seen_run_id: 'The sync run (sync_runs.id) that last saw this record.',
    },
    [history]: {
      '': `Every version of each ${name} record hiresync has stored, one row per version; the open version (valid_to null) is the record as it is now. A page that changes nothing adds no version.${shared}`,
      account: 'The account the row belongs to.',
      id: `Record id (API), as in ${name}.id.`,
      valid_from:
        'When this version began (the transaction time of the page or sweep that stored it).',
      valid_to: 'When the next version replaced this one; null for the current version.',
      run_id: 'The sync run (sync_runs.id) that stored this version.',
      deleted:
        'True for the version that records a deletion (a full sync no longer saw the record); it holds the last record seen.',
      data: 'The record exactly as the API sent it in this version.',
    },
  };
  const statements: string[] = [];
  for (const [table, columns] of Object.entries(notes)) {
    for (const [column, note] of Object.entries(columns)) {
      statements.push(
        column === ''
          ? `comment on table hiresync.${ident(table)} is ${literal(note)}`
          : `comment on column hiresync.${ident(table)}.${ident(column)} is ${literal(note)}`,
      );
    }
  }
  await sql.raw(`${statements.join(';\n')};`).execute(trx);
  return true;
}

/**
 * Makes, in `schema` (account `account`'s), the views of list resource
 * `name` where missing: `NAME_data` and `NAME_history` over its shared
 * tables (see accountViewsText), the view `NAME` analysts read, and the
 * typed view `NAME_flat` (id and the row's state until a refresh fills it),
 * registered in the schema's `typed_views`. Its shared tables must exist.
 */
export async function createListResourceViews(
  trx: Trx,
  schema: string,
  account: string,
  name: string,
): Promise<void> {
  const wanted = new Set([listResourceTable(name), `${name}_history`]);
  const tables = (await sharedTables(trx)).filter((t) => wanted.has(t.table));
  const s = ident(schema);
  const data = `${s}.${ident(listResourceTable(name))}`;
  const flat = `${name}_flat`;
  const statements = [
    accountViewsText(schema, account, tables),
    `create or replace view ${s}.${ident(name)} as select id, data, deleted_at, changed_at, first_synced_at, synced_at, last_seen_run_id from ${data}`,
    `comment on view ${s}.${ident(name)} is ${literal(
      `${name} as the API lists them, one row per record, the record as sent in data; deleted_at is set for records a full sync no longer saw. See ${name}_flat for one typed column per key.`,
    )}`,
  ];
  for (const column of tables.find((t) => t.table === listResourceTable(name))?.columns ?? []) {
    if (column.comment === null || column.name === 'account') continue;
    statements.push(
      `comment on column ${s}.${ident(name)}.${ident(column.name)} is ${literal(column.comment)}`,
    );
  }
  await sql.raw(statements.join(';\n')).execute(trx);
  // Its typed view, filled at the end of its first full run (see refresh-typed-view.ts).
  await sql`insert into ${sql.raw(sharedRelation('typed_views'))} (account, view, source_table)
    values (${account}, ${flat}, ${listResourceTable(name)})
    on conflict (account, view) do nothing`.execute(trx);
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass(${`${ident(schema)}.${ident(flat)}`}) is not null as present`.execute(trx);
  if (!rows[0]?.present) {
    await sql.raw(typedViewPlaceholderText(schema, flat, listResourceTable(name))).execute(trx);
  }
}
