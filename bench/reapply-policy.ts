/**
 * Benchmark: how fast hiresync reapply-policy rewrites stored records.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node dist/bench/reapply-policy.js [records] [batch]
 *
 * Stores `records` candidates (names, emails, phone numbers, addresses) with
 * no policy, as a sync does (pages of 500 through the run store: rows and a
 * first version each in history), then rewrites them under a policy of two
 * hashed and two dropped keys (one of each inside arrays of objects), as the
 * command does: every row and version read, policed and written back in
 * batches. Then once more under a policy text that changes nothing of what
 * is stored (every row read and policed, none written): the cost of a pass
 * over records already policed.
 */

import { recordPolicyOf } from '../src/config/load-config.js';
import { resolvePolicy } from '../src/privacy/policy-targets.js';
import { BUILT_IN_RESOURCES, catalogFor } from '../src/resources/index.js';
import { defineListResource } from '../src/resources/json-resource.js';
import { Dataset } from '../src/simulator/dataset.js';
import { createDatabase } from '../src/warehouse/database.js';
import { KyselyRunStore } from '../src/warehouse/runs/run-store.js';
import { createRun } from '../src/warehouse/runs/sync-runs.js';
import {
  ensureListResources,
  migrateControl,
  migrateSchemas,
} from '../src/warehouse/setup/migrate-all.js';
import { reapplyResource } from '../src/warehouse/upkeep/policy-reapply.js';
import { HASH_KEY, POLICY } from './field-policy-cost.js';
import { fmt, freshDatabase } from './support.js';

const PAGE = 500;
/** The same effect on what is stored (nothing left to change), under another text. */
const SAME_EFFECT = `${POLICY},candidates.no_such_key=drop`;

function policyOf(text: string) {
  const { fieldPolicy, problems } = recordPolicyOf({
    HIRESYNC_FIELD_POLICY: text,
    HIRESYNC_HASH_KEY: HASH_KEY,
  });
  if (!fieldPolicy || problems.length > 0) throw new Error(problems.map((p) => p.message).join());
  const resolved = resolvePolicy(fieldPolicy, BUILT_IN_RESOURCES);
  if ('problems' in resolved) throw new Error(resolved.problems.join('; '));
  return resolved.policy;
}

export interface ReapplyCostResult {
  records: number;
  batch: number;
  /** Rows (table and history) per second: the first pass (every row rewritten), the pass that changes nothing. */
  rewritePerS: number;
  rereadPerS: number;
  rows: number;
  rewritten: number;
}

export async function reapplyCost(records = 20_000, batch = 500): Promise<ReapplyCostResult> {
  const dataset = new Dataset({ counts: { candidates: records } });
  const target = await freshDatabase('reapply_cost', { migrate: false });
  const db = createDatabase(target.url, { max: 2 });
  try {
    await migrateControl(db);
    await migrateSchemas(db, ['public']);
    await ensureListResources(db, ['candidates']);
    const store = new KyselyRunStore(db, { resources: catalogFor(['candidates']) });
    const run = await createRun(db, 'default', { resource: 'candidates', mode: 'full' });
    for (let start = records - 1, number = 1; start >= 0; start -= PAGE, number += 1) {
      const page: unknown[] = [];
      for (let i = start; i > start - PAGE && i >= 0; i -= 1)
        page.push(dataset.record('candidates', i));
      const body = JSON.stringify(page);
      await store.writePage('candidates', run, {
        number,
        url: 'bench',
        body,
        records: page,
        nextUrl: undefined,
      });
    }
    const account = {
      account: 'default',
      schema: 'public',
      resource: defineListResource('candidates'),
    };
    const pass = async (text: string) => {
      const started = performance.now();
      const reports = await reapplyResource(db, account, policyOf(text), {
        batchSize: batch,
        rowWaitMs: 60_000,
      });
      const seconds = (performance.now() - started) / 1000;
      const rows = reports.reduce((n, r) => n + r.read, 0);
      return { rows, rewritten: reports.reduce((n, r) => n + r.rewritten, 0), seconds };
    };
    const first = await pass(POLICY);
    const again = await pass(SAME_EFFECT);
    return {
      records,
      batch,
      rows: first.rows,
      rewritten: first.rewritten,
      rewritePerS: first.rows / first.seconds,
      rereadPerS: again.rows / again.seconds,
    };
  } finally {
    await db.destroy();
    await target.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await reapplyCost(Number(process.argv[2]) || 20_000, Number(process.argv[3]) || 500);
  process.stdout.write(
    `reapply-policy, ${fmt(r.records)} candidates (${fmt(r.rows)} rows: table and history), batches of ${r.batch}, policy ${POLICY}:\n` +
      `  every row rewritten (${fmt(r.rewritten)}): ${fmt(r.rewritePerS)} rows/s\n` +
      `  a pass that changes nothing (read and policed, none written): ${fmt(r.rereadPerS)} rows/s\n`,
  );
}
