import { type Kysely, sql } from 'kysely';
import type { RecordPolicy } from '../../privacy/police-page.js';
import { storedRecordPolicy } from '../../privacy/policy-targets.js';
import type { StorageKind } from '../../sync/ports.js';
import { REFERENCE_COLUMNS } from '../pages/sql/reference-records-page.js';
import type { Database } from '../tables.js';
import type { DeclaredColumns } from '../typed-views/column-plan.js';
import { refreshTypedView } from '../typed-views/refresh-typed-view.js';
import {
  beginProgress,
  checkStart,
  completeProgress,
  markChecked,
  type RelationId,
  readProgress,
} from './reapply-progress.js';
import {
  catchUp,
  type PassOptions,
  type PassProgress,
  rewriteRelation,
} from './reapply-relation.js';
import type { CellSource, RowPolice } from './reapply-rows.js';
import type { ReapplyShape } from './sql/reapply-policy.js';

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
  /** Keys its typed view always shows at their declared types: a hash never widens them. */
  readonly columns?: DeclaredColumns | undefined;
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
     * under the same rules, and nothing written since needed rewriting;
     * `caught up`: done before under the same rules, but rows written
     * since (by a run under another policy) did, and were rewritten
     * (`late`); `absent`: the account's schema has no such relation (a
     * list resource it never stored).
     */
    status: 'rewritten' | 'already applied' | 'caught up' | 'absent';
    /**
     * Rows a run wrote under another policy, rewritten: during the pass (see
     * PassOutcome.late; the relation is left incomplete), or since a pass
     * completed (`caught up`).
     */
    late: number;
    /** The pass continued one stopped earlier (after the rows it had read). */
    resumed: boolean;
    /** Rows read by earlier, stopped runs of the same pass. */
    readBefore: number;
  };

/** Options of {@link reapplyResource}. */
export interface ReapplyOptions extends Omit<PassOptions, 'onBatch'> {
  /**
   * Pass over a relation completed under the same rules again, every row
   * (`reapply-policy --again`). Default false: only what was written since
   * is looked at.
   */
  again?: boolean;
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
  db: Kysely<Database>,
  account: string,
  resource: ReapplyResource,
  keys: readonly string[],
): Promise<void> {
  if (resource.typedView === undefined || keys.length === 0) return;
  const { rows } = await sql<{ narrower: boolean }>`
    select exists (
      select 1 from hiresync.data_typed_view_columns
      where account = ${account} and view = ${resource.typedView} and key = any(${keys}::text[])
        and type not in ('text', 'jsonb', 'unknown')
    ) as narrower`.execute(db);
  if (!rows[0]?.narrower) return;
  const view = {
    view: resource.typedView,
    table: resource.table,
    account,
    columns: resource.columns,
  };
  await refreshTypedView(db, view, undefined, { everyRecord: true });
}

/** Whether the account's schema has `relation` (its view of hiresync.data_<relation>). */
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
 * hiresync.policy_reapply: of a relation done under the same rules only the
 * rows written since are looked at (a run under the old policy may have
 * written them; `again`: every row), one stopped is continued, one done
 * under other rules starts over. Every statement names the shared tables
 * and binds `target.account`. After
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
    const relation = { ...id, shape, police };
    if (known?.policy === text && known.completed && options.again !== true) {
      // Done under these rules; a run under the old policy may have written since.
      const from = await checkStart(db);
      const late = await catchUp(db, relation, known.startedAt, {
        ...options,
        onBatch: undefined,
      });
      await markChecked(db, id, from);
      const done = { read: known.rowsRead, rewritten: known.rowsRewritten, total: known.rowsRead };
      report({ ...blank, ...done, late, status: late > 0 ? 'caught up' : 'already applied' });
      continue;
    }
    const resumed = known?.policy === text && !known.completed;
    const progress = resumed && known ? known : await beginProgress(db, id, text);
    const readBefore = progress.rowsRead;
    options.onStart?.({ ...blank, status: 'rewritten', resumed, readBefore, read: readBefore });
    const outcome = await rewriteRelation(db, relation, progress, {
      ...options,
      onBatch: (p) => options.onBatch?.(id, p),
    });
    if (shape.kind === 'table' && outcome.rewritten > 0) {
      await refreshIfNarrower(db, target.account, resource, hashedKeys(rules, resource.name));
    }
    if (outcome.late === 0) await completeProgress(db, id);
    report({ ...id, ...outcome, status: 'rewritten', resumed, readBefore });
  }
  return reports;
}
