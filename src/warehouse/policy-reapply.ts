import { type Kysely, sql } from 'kysely';
import type { RecordPolicy } from '../privacy/police-page.js';
import { storedRecordPolicy } from '../privacy/policy-targets.js';
import type { StorageKind } from '../sync/ports.js';
import { inSchema } from './database.js';
import {
  beginProgress,
  completeProgress,
  type RelationId,
  readProgress,
} from './reapply-progress.js';
import { type PassOptions, type PassProgress, rewriteRelation } from './reapply-relation.js';
import type { CellSource, RowPolice } from './reapply-rows.js';
import { refreshTypedView } from './refresh-typed-view.js';
import type { Database } from './schema.js';
import type { ReapplyShape } from './sql/reapply-policy.js';
import { REFERENCE_COLUMNS } from './sql/reference-records-page.js';

/** What reapply-policy needs of a resource: where its records, versions and columns are. */
export interface ReapplyResource {
  readonly name: string;
  /** Its table, in the account's schema (`jobs`, `candidates_data`, `tracking_links`, …). */
  readonly table: string;
  readonly historyTable: string;
  /** The column of `table` and `historyTable` holding the record. */
  readonly recordColumn: 'data' | 'raw';
  readonly storage: StorageKind;
  /** Its typed view over `data` (`jobs_flat`, …), if any. */
  readonly typedView?: string | undefined;
}

/** One account's resource to rewrite under the policy. */
export interface ReapplyTarget {
  account: string;
  /** The account's schema (its views of shared storage). */
  schema: string;
  resource: ReapplyResource;
}

/** What happened to one relation. */
export type RelationReport = RelationId &
  PassProgress & {
    /**
     * `rewritten`: a pass ran to its end; `already applied`: done before
     * under the same rules; `absent`: the account's schema has no such
     * relation (a list resource it never stored).
     */
    status: 'rewritten' | 'already applied' | 'absent';
    /** Rows a run wrote meanwhile under another policy (see PassOutcome.late); the relation is left incomplete. */
    late: number;
    /** The pass continued one stopped earlier (after the rows it had read). */
    resumed: boolean;
    /** Rows read by earlier, stopped runs of the same pass. */
    readBefore: number;
  };

/** Options of {@link reapplyResource}. */
export interface ReapplyOptions extends Omit<PassOptions, 'onBatch'> {
  /** Told after each batch of a relation. */
  onBatch?: (relation: RelationId, progress: PassProgress) => void | Promise<void>;
  /** Told of each relation as its pass begins (`resumed`, `readBefore`). */
  onStart?: (report: RelationReport) => void;
  /** Told of each relation once done, skipped or absent. */
  onDone?: (report: RelationReport) => void;
}

/** The rules of `resource`'s rows, and the text that names them (hiresync.policy_reapply.policy). */
export function rulesOf(
  policy: RecordPolicy,
  resource: string,
): { police: RecordPolicy; text: string } {
  const stored = storedRecordPolicy(policy.policy, resource);
  return { police: policy.with(stored), text: stored.describe(resource) };
}

/** A reference table's text columns and the keys of its list's records and nested copies that fill them. */
function cellSourcesOf(storage: StorageKind): CellSource[] | undefined {
  const columns = REFERENCE_COLUMNS[storage];
  if (storage === 'json' || storage === 'tracking_links' || !columns) return undefined;
  // A nested copy's key is the column's own name (a source's public_name).
  return columns.map(([column, key]) => ({ column, keys: [...new Set([key, column])] }));
}

/** The three relations of a resource, as reapply-policy rewrites them. */
function shapesOf(resource: ReapplyResource): ReapplyShape[] {
  const cells = cellSourcesOf(resource.storage);
  return [
    {
      kind: 'table',
      relation: resource.table,
      column: resource.recordColumn,
      columns: cells?.map((c) => c.column),
      trackingLinks: resource.storage === 'tracking_links',
    },
    { kind: 'history', relation: resource.historyTable, column: resource.recordColumn },
    { kind: 'rejected', relation: 'rejected_records', column: 'raw' },
  ];
}

/**
 * Top-level keys whose values the policy may turn into hashes (strings): a
 * key hashed whole, or one with rules below it that all hash (a value the
 * walk cannot enter gets that action).
 */
function hashedKeys(policy: RecordPolicy, resource: string): string[] {
  const tree = policy.policy.treeOf(resource);
  if (!tree) return [];
  return [...tree.children]
    .filter(([, node]) => (node.action ?? node.strongest) === 'hash')
    .map(([key]) => key);
}

/**
 * Refreshes `resource`'s typed view over every record when a key the policy
 * hashes has a column of a type a hash does not fit (a number, a boolean, a
 * time: it would read null): the column widens to text, as a run's refresh
 * does for the records it changed (a rewrite changes no changed_at, which a
 * run's refresh goes by). A dropped key keeps its column, reading null, as
 * after a run: an analyst's query naming it keeps working.
 */
async function refreshIfNarrower(
  account: Kysely<Database>,
  resource: ReapplyResource,
  keys: readonly string[],
): Promise<void> {
  if (resource.typedView === undefined || keys.length === 0) return;
  const { rows } = await sql<{ narrower: boolean }>`
    select exists (
      select 1 from typed_view_columns
      where view = ${resource.typedView} and key = any(${keys}::text[])
        and type not in ('text', 'jsonb', 'unknown')
    ) as narrower`.execute(account);
  if (!rows[0]?.narrower) return;
  const view = { view: resource.typedView, table: resource.table };
  await refreshTypedView(account, view, undefined, { everyRecord: true });
}

async function exists(db: Kysely<Database>, schema: string, relation: string): Promise<boolean> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass(${`"${schema}"."${relation}"`}) is not null as present`.execute(db);
  return rows[0]?.present === true;
}

/**
 * Rewrites what one account holds of one resource under `policy` (resolved,
 * with HIRESYNC_HASH_KEY): its table (records and, for tracking links and the
 * reference tables, the columns filled from policed keys), every version in
 * its history, and its rejected records, one relation after the other, each
 * in batches (see rewriteRelation) with its progress in
 * hiresync.policy_reapply: a relation done under the same rules is skipped,
 * one stopped is continued, one done under other rules starts over. After
 * the table, a typed view (`jobs_flat`, …) looks at every record again (a
 * hashed value where a number was widens its column to text; a dropped key
 * keeps its column, reading null, as after a run). `db` is the pool's root
 * instance (createDatabase).
 */
export async function reapplyResource(
  db: Kysely<Database>,
  target: ReapplyTarget,
  policy: RecordPolicy,
  options: ReapplyOptions,
): Promise<RelationReport[]> {
  const { resource } = target;
  const { police: rules, text } = rulesOf(policy, resource.name);
  const police: RowPolice = {
    record: (record) => rules.record(resource.name, record, { keepHashed: true }),
    columns: cellSourcesOf(resource.storage),
  };
  const account = inSchema(db, target.schema);
  const reports: RelationReport[] = [];
  const report = (r: RelationReport) => {
    reports.push(r);
    options.onDone?.(r);
  };
  for (const shape of shapesOf(resource)) {
    const id = { account: target.account, resource: resource.name, relation: shape.relation };
    const blank = {
      ...id,
      read: 0,
      rewritten: 0,
      total: 0,
      late: 0,
      resumed: false,
      readBefore: 0,
    };
    if (!(await exists(db, target.schema, shape.relation))) {
      report({ ...blank, status: 'absent' });
      continue;
    }
    const known = await readProgress(db, id);
    if (known?.policy === text && known.completed) {
      const done = { read: known.rowsRead, rewritten: known.rowsRewritten, total: known.rowsRead };
      report({ ...blank, ...done, status: 'already applied' });
      continue;
    }
    const resumed = known?.policy === text;
    const progress = resumed && known ? known : await beginProgress(db, id, text);
    const readBefore = progress.rowsRead;
    options.onStart?.({ ...blank, status: 'rewritten', resumed, readBefore, read: readBefore });
    const outcome = await rewriteRelation(account, { ...id, shape, police }, progress, {
      ...options,
      onBatch: (p) => options.onBatch?.(id, p),
    });
    if (shape.kind === 'table' && outcome.rewritten > 0) {
      await refreshIfNarrower(account, resource, hashedKeys(rules, resource.name));
    }
    if (outcome.late === 0) await completeProgress(db, id);
    report({ ...id, ...outcome, status: 'rewritten', resumed, readBefore });
  }
  return reports;
}
