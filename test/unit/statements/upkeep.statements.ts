// The statements of the upkeep and read paths, for the lint that every
// statement names shared tables qualified and binds the account
// (test/unit/statements-bind-the-account.test.ts): typed-view refreshes,
// webhook deletions, erasure, reapply-policy, status and metrics reads. The
// written-out texts of src/warehouse/upkeep/sql and src/warehouse/reports/latest-runs.ts, and what
// the real functions send, captured on a recording Kysely (every Kysely
// query compiled by the Postgres compiler, every `sql` template as sent).
// The three reads of src/warehouse/reports/latest-runs.ts bind the accounts as `$1` through
// `unnest($1::text[]) a(account)` joined on account, not `account = any($1)`
// in each probe (200 times slower at 2,000 accounts: see that file).
// Left out: the reference tables' lock statement (accountReferenceLocksText,
// in the run path's corpus; it names no relation) and begin/commit/rollback/savepoints.
import type { Kysely } from 'kysely';
import { recordPolicyOf } from '../../../src/config/load-config.js';
import { resolvePolicy } from '../../../src/privacy/policy-targets.js';
import { BUILT_IN_RESOURCES, RESOURCE_NAMES } from '../../../src/resources/index.js';
import { defineListResource } from '../../../src/resources/json-resource.js';
import { readAccountSeries } from '../../../src/status/account-series.js';
import { checkConnections } from '../../../src/status/preflight.js';
import { defaultAccountShown, readTypedViewBlocks } from '../../../src/status/read-status.js';
import { REFERENCE_COLUMNS } from '../../../src/warehouse/pages/sql/reference-records-page.js';
import {
  LAST_SUCCESSES_TEXT,
  LATEST_OUTCOMES_TEXT,
  LATEST_RUNS_TEXT,
} from '../../../src/warehouse/reports/latest-runs.js';
import type { Database } from '../../../src/warehouse/tables.js';
import { refreshTypedView } from '../../../src/warehouse/typed-views/refresh-typed-view.js';
import {
  deletionCutoff,
  erasableAccounts,
  eraseDeletedOf,
} from '../../../src/warehouse/upkeep/erase-deleted.js';
import { assertErasureLog, eraseRecords } from '../../../src/warehouse/upkeep/erase-records.js';
import { reapplyResource, rulesOf } from '../../../src/warehouse/upkeep/policy-reapply.js';
import { waitForRuns } from '../../../src/warehouse/upkeep/reapply-guard.js';
import { saveProgress } from '../../../src/warehouse/upkeep/reapply-progress.js';
import { eraseRecords as eraseRecordsText } from '../../../src/warehouse/upkeep/sql/erase-records.js';
import {
  type ReapplyShape,
  reapplyCount,
  reapplyLock,
  reapplyRead,
  reapplyWrite,
} from '../../../src/warehouse/upkeep/sql/reapply-policy.js';
import { webhookDeletion } from '../../../src/warehouse/upkeep/sql/webhook-deletion.js';
import { applyWebhookDeletion } from '../../../src/warehouse/upkeep/webhook-deletions.js';
import { recordingDatabase } from '../../support/recording-database.js';

/** The rows a statement of the corpus is answered with, by its text. */
type CannedRows = (sql: string) => ReadonlyArray<Record<string, unknown>>;

type Statement = { name: string; sql: string };

/** The relations reapply-policy rewrites, one of each kind. */
const SHAPES: ReadonlyArray<[string, ReapplyShape]> = [
  ['jobs', { kind: 'table', relation: 'jobs', column: 'data' }],
  ['candidates_data', { kind: 'table', relation: 'candidates_data', column: 'data' }],
  [
    'sources',
    {
      kind: 'table',
      relation: 'sources',
      column: 'raw',
      columns: REFERENCE_COLUMNS.sources?.map(([column]) => column),
    },
  ],
  [
    'tracking_links',
    { kind: 'table', relation: 'tracking_links', column: 'raw', trackingLinks: true },
  ],
  ['candidates_history', { kind: 'history', relation: 'candidates_history', column: 'data' }],
  ['rejected_records', { kind: 'rejected', relation: 'rejected_records', column: 'raw' }],
];

function writtenOut(): Statement[] {
  const texts: Statement[] = [];
  for (const [name, shape] of SHAPES) {
    texts.push(
      { name: `reapply read ${name}`, sql: reapplyRead(shape) },
      { name: `reapply lock ${name}`, sql: reapplyLock(shape, true) },
      { name: `reapply lock ${name} (waiting)`, sql: reapplyLock(shape, false) },
      { name: `reapply write ${name}`, sql: reapplyWrite(shape) },
      { name: `reapply count ${name}`, sql: reapplyCount(shape) },
    );
  }
  texts.push(
    {
      name: 'erase records',
      sql: eraseRecordsText({ table: 'candidates_data', history: 'candidates_history' }),
    },
    {
      name: 'webhook deletion with history',
      sql: webhookDeletion({ table: 'jobs', history: 'jobs_history', recordColumn: 'data' }),
    },
    {
      name: 'webhook deletion without history',
      sql: webhookDeletion({ table: 'tracking_links', recordColumn: 'raw' }),
    },
    { name: 'latest runs', sql: LATEST_RUNS_TEXT },
    { name: 'latest outcomes', sql: LATEST_OUTCOMES_TEXT },
    { name: 'last successes', sql: LAST_SUCCESSES_TEXT },
  );
  return texts;
}

/** What the canned database answers: enough for each path to go its whole way. */
const answer =
  (extra: CannedRows = () => []): CannedRows =>
  (text) => {
    const given = extra(text);
    if (given.length > 0) return given;
    if (text.includes(' as present')) return [{ present: true }];
    if (text.includes(' as due')) return [{ due: true }];
    if (text.includes(' as free')) return [{ free: false }];
    if (text.includes(' as before')) return [{ before: '2026-01-01T00:00:00.000Z' }];
    if (text.includes('with kv as')) {
      return [
        {
          key: 'name',
          values: '1',
          numbers: '0',
          integers: '0',
          booleans: '0',
          strings: '1',
          timestamps: '0',
          dates: '0',
          structured: '0',
        },
      ];
    }
    if (text.includes('returning started_at')) return [{ started_at: '2026-01-01 00:00:00+00' }];
    if (text.includes(' as at')) return [{ at: '2026-01-01 00:00:00+00' }];
    if (text.includes('as narrower')) return [{ narrower: true }];
    return [];
  };

/** Each statement `path` sends on a recording database answering `rows`. */
async function sent(
  name: string,
  path: (db: Kysely<Database>) => Promise<unknown>,
  rows: CannedRows = answer(),
): Promise<Statement[]> {
  const { db, statements: recorded } = recordingDatabase((statement) => rows(statement.sql));
  await path(db).catch(() => {});
  return recorded
    .filter(
      (r) => !/^(begin|commit|rollback|savepoint|release savepoint|rollback to)\b/.test(r.sql),
    )
    .map((r, i) => ({ name: `${name} #${i + 1}`, sql: r.sql }));
}

const POLICY_ENV = {
  HIRESYNC_FIELD_POLICY: 'candidates.emails.value=hash,candidates.title=drop',
  HIRESYNC_HASH_KEY: '00'.repeat(32),
};

function candidatesPolicy() {
  const { fieldPolicy } = recordPolicyOf(POLICY_ENV, RESOURCE_NAMES);
  if (!fieldPolicy) throw new Error('no policy');
  const resolved = resolvePolicy(fieldPolicy, BUILT_IN_RESOURCES);
  if ('problems' in resolved) throw new Error(resolved.problems.join('; '));
  return resolved.policy;
}

async function captured(): Promise<Statement[]> {
  const candidates = defineListResource('candidates');
  const jobs = BUILT_IN_RESOURCES.get('jobs');
  if (!jobs) throw new Error('no jobs');
  const policy = candidatesPolicy();
  const target = { account: 'acme', schema: 'acme', resource: candidates };
  const reapply = { batchSize: 10, rowWaitMs: 1000 };
  const done = (text: string) =>
    text.includes('from hiresync.policy_reapply')
      ? [
          {
            policy: rulesOf(policy, 'candidates').text,
            last_id: '9',
            last_valid_from: null,
            rows_read: '9',
            rows_rewritten: '1',
            started_at: '2026-01-01 00:00:00+00',
            completed: true,
          },
        ]
      : [];
  const groups = await Promise.all([
    sent('refresh typed view', (db) =>
      refreshTypedView(db, { view: 'jobs_flat', table: 'jobs', account: 'acme' }, '12'),
    ),
    sent('refresh typed view (every record)', (db) =>
      refreshTypedView(
        db,
        { view: 'candidates_flat', table: 'candidates_data', account: 'acme' },
        undefined,
        {
          everyRecord: true,
        },
      ),
    ),
    sent('reapply a resource', (db) => reapplyResource(db, target, policy, reapply)),
    sent(
      'reapply a completed resource',
      (db) => reapplyResource(db, target, policy, reapply),
      answer(done),
    ),
    sent('reapply progress', (db) =>
      saveProgress(
        db,
        { account: 'acme', resource: 'candidates', relation: 'candidates_data' },
        { id: '9' },
        9,
        1,
      ),
    ),
    sent('reapply waits for runs', (db) => waitForRuns(db, 'acme', 'sources', { waitMs: 1000 })),
    sent('erase records', (db) =>
      eraseRecords(db, {
        account: 'acme',
        resource: candidates,
        waitMs: 1000,
        ids: ['1'],
        origin: 'command',
        note: null,
      }),
    ),
    sent('erase deleted', async (db) => {
      await assertErasureLog(db);
      await erasableAccounts(db);
      const before = await deletionCutoff(db, 86_400_000);
      await eraseDeletedOf(db, 'acme', jobs, { before, note: 'n', waitMs: 1000 });
    }),
    sent('webhook deletion', (db) =>
      applyWebhookDeletion(db, {
        account: 'acme',
        target: jobs,
        ids: ['1', '2'],
        lockName: 'acme:jobs',
      }),
    ),
    sent('status reads', async (db) => {
      await defaultAccountShown(db, false);
      await readTypedViewBlocks(db, ['default', 'acme']);
    }),
    sent('metrics reads', (db) => readAccountSeries(db)),
    sent('preflight', (db) =>
      checkConnections(db, { ping: () => Promise.reject(new Error('no Redis')) } as never),
    ),
  ]);
  return groups.flat();
}

/** Every statement the upkeep and read paths send, by name. */
export const statements: ReadonlyArray<Statement> = [...writtenOut(), ...(await captured())];
