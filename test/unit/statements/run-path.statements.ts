import { BUILT_IN_RESOURCES, catalogOf } from '../../../src/resources/index.js';
import { defineListResource } from '../../../src/resources/json-resource.js';
import type { ResourceDeclaration } from '../../../src/resources/resource.js';
import { createSharedListTables } from '../../../src/warehouse/layout/shared-list-tables.js';
import { writePage } from '../../../src/warehouse/pages/write-page.js';
import { ResourceLock } from '../../../src/warehouse/runs/resource-lock.js';
import { KyselyRunStore } from '../../../src/warehouse/runs/run-store.js';
import {
  type RecordedStatement,
  type Respond,
  recordingDatabase,
} from '../../support/recording-database.js';

/**
 * Every statement of a run, as the engine sends it: captured by running the
 * real functions (the run store, the page writer, the run lock, the list
 * resources' tables) against a recording Kysely, for each resource and
 * each path a page can take (written, with rejected records, left alone as
 * unchanged, written record by record after Postgres refused a value).
 * test/unit/statements-bind-the-account.test.ts lints each.
 */

/** Rows that steer each path: a run to sweep, a page partly unchanged, a lock held. */
const respond: Respond = ({ sql }) => {
  if (sql.includes('returning "id"')) return [{ id: '7' }];
  if (sql.includes('pg_try_advisory_lock')) return [{ ok: true, pid: 42 }];
  if (sql.includes('from "hiresync"."data_sync_runs" where')) {
    return [
      {
        id: '7',
        resource: 'jobs',
        mode: 'full',
        filter: null,
        outcome: 'running',
        started_at: '2026-01-01 00:00:00+00',
      },
    ];
  }
  if (sql.includes('count(*) filter')) return [{ live: '10', unseen: '1' }];
  if (sql.includes('as nothing_to_write')) {
    return [{ unchanged: [0], nothing_to_write: false, max_id: '2', min_id: '1' }];
  }
  if (sql.includes('held')) return [{ held: true }];
  return undefined;
};

/** A refused value, as Postgres reports one (SQLSTATE 22P02). */
function refused(): Error {
  return Object.assign(new Error('invalid input syntax'), { code: '22P02' });
}

const list = defineListResource('scorecards');
const resources = catalogOf(...BUILT_IN_RESOURCES.values(), list);

const body = JSON.stringify([
  { id: 1, token: 't', name: 'n', job_board: { id: 3 }, source: { id: 4 } },
  { id: 2, token: 'u', name: 'm' },
  { id: 'not an id' },
]);

async function capture(): Promise<Array<{ name: string; sql: string }>> {
  const out: Array<{ name: string; sql: string }> = [];
  const keep = (name: string, recorded: readonly RecordedStatement[]) => {
    for (const [i, statement] of recorded.entries()) {
      out.push({ name: `${name} #${i + 1}`, sql: statement.sql });
    }
  };

  for (const resource of resources.values() as Iterable<ResourceDeclaration>) {
    for (const account of ['default', 'acme']) {
      const recording = recordingDatabase(respond);
      const store = new KyselyRunStore(recording.db, {
        resources,
        account,
        ensureListResource: async () => {},
      });
      const page = {
        number: 1,
        url: 'https://api.example/v3/x',
        nextUrl: undefined,
        body,
        records: JSON.parse(body) as unknown[],
      };
      const run = await store.createRun({ resource: resource.name, mode: 'full' });
      await store.runOutcome(run);
      await store.completedRuns(resource.name, { lookbackMs: 1000, filterPrefix: 'updated_after' });
      await store.writePage(resource.name, run, page);
      await store.writePage(resource.name, run, page, undefined, { skipUnchanged: true });
      // Written beside the page before it (a pipelined walk): its rows first, then its turn.
      const before = [{ id: 9, token: 'v', name: 'o', job_board: { id: 3 } }];
      await store.writePage(resource.name, run, page, undefined, {
        earlier: {
          committed: Promise.resolve(),
          prepared: store.preparePage(resource.name, {
            ...page,
            body: JSON.stringify(before),
            records: before,
          }),
        },
      });
      await store.resetProgress(run);
      await store.sweepDeletions(resource.name, run).catch(() => {});
      await store.finishRun(run, { outcome: 'failed', error: 'e' });
      await store.completeRun(resource.name, run);
      keep(`${resource.name} for ${account}`, recording.statements);

      // Postgres refuses a value of the page: written record by record.
      let first = true;
      const fallback = recordingDatabase((statement) => {
        if (first && statement.sql.startsWith('-- A page')) {
          first = false;
          return refused();
        }
        return respond(statement);
      });
      await writePage(fallback.db, {
        account,
        resource,
        runId: '7',
        pageNumber: 2,
        body,
        records: JSON.parse(body) as unknown[],
      });
      keep(`${resource.name} for ${account}, record by record`, fallback.statements);
    }
  }

  const locking = recordingDatabase(respond);
  const lock = new ResourceLock(locking.db, { heartbeatMs: 60_000 });
  const held = await lock.tryAcquire('acme/jobs');
  await locking.db.transaction().execute((trx) => lock.assertHeld('acme/jobs', trx));
  await held?.release();
  keep('the run lock', locking.statements);

  const lists = recordingDatabase(respond);
  await lists.db.transaction().execute((trx) => createSharedListTables(trx, 'scorecards'));
  keep('a list resource made on demand', lists.statements);
  return out;
}

export const statements: ReadonlyArray<{ name: string; sql: string }> = await capture();
