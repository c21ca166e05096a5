/**
 * Benchmark: what HIRESYNC_FIELD_POLICY costs the page write.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node dist/bench/field-policy-cost.js [records]
 *
 * Writes the same pages of 500 candidates (the resource a policy is for:
 * names, emails, phone numbers, addresses) through the run store, as a sync
 * does, into two databases: one under a policy of two hashed and two dropped
 * keys (one of each inside arrays of objects), one without. Pages alternate
 * which goes first, so both meet the same machine conditions. The policed
 * write includes all the policy costs: the body parsed with its numbers kept
 * exactly, the keys dropped and hashed, the body written anew and parsed
 * again for validation. Two passes: inserts into empty tables, then the
 * same pages re-written (a full run's usual page). Then the same records
 * synced end to end from a simulator process, with the policy and without:
 * the second full run of each database is timed (the first also makes the
 * tables and the typed view); a full run polices the next page while this
 * one is being written.
 */

import type { Kysely } from 'kysely';
import { recordPolicyOf } from '../src/config/load-config.js';
import { catalogFor } from '../src/resources/index.js';
import { Dataset } from '../src/simulator/dataset.js';
import type { Page } from '../src/sync/ports.js';
import { createDatabase } from '../src/warehouse/database.js';
import { KyselyRunStore } from '../src/warehouse/runs/run-store.js';
import { createRun } from '../src/warehouse/runs/sync-runs.js';
import {
  ensureListResources,
  migrateAll,
  migrateControl,
  migrateSchemas,
} from '../src/warehouse/setup/migrate-all.js';
import type { Database } from '../src/warehouse/tables.js';
import { childSync, clearPrefix, startSimulatorProcess, syncEnv } from './end-to-end.js';
import { fmt, freshDatabase } from './support.js';

const PAGE = 500;
/** The policy's key (hex), shared with bench/reapply-policy.ts. */
export const HASH_KEY = Buffer.alloc(32, 9).toString('hex');
export const POLICY =
  'candidates.emails.value=hash,candidates.last_name=hash,candidates.phone_numbers=drop,candidates.addresses.value=drop';

export interface PolicyPass {
  pass: 'inserts' | 're-writes';
  policedPerS: number;
  plainPerS: number;
}

export interface PolicyCostResult {
  records: number;
  passes: PolicyPass[];
  /** `sync` of the candidates from a simulator process, records/s: with the policy, without (means of alternated rounds). */
  sync: { policedPerS: number; plainPerS: number; rounds: number };
}

function pagesOf(dataset: Dataset, records: number): string[] {
  const bodies: string[] = [];
  for (let start = records - 1; start >= 0; start -= PAGE) {
    const page: unknown[] = [];
    for (let i = start; i > start - PAGE && i >= 0; i -= 1)
      page.push(dataset.record('candidates', i));
    bodies.push(JSON.stringify(page));
  }
  return bodies;
}

/** Writes every page into both databases, alternating which goes first; returns records/s of each. */
async function pass(
  stores: readonly KyselyRunStore[],
  dbs: readonly Kysely<Database>[],
  pages: readonly Page[],
): Promise<{ policedPerS: number; plainPerS: number }> {
  const runs = await Promise.all(
    dbs.map((db) => createRun(db, 'default', { resource: 'candidates', mode: 'full' })),
  );
  const spent = [0, 0];
  for (const [index, page] of pages.entries()) {
    for (const which of index % 2 === 0 ? [0, 1] : [1, 0]) {
      // A fresh copy of the page: the policy polices the parsed records in place.
      const copy = { ...page, records: JSON.parse(page.body) as unknown[] };
      const started = performance.now();
      await stores[which]?.writePage('candidates', runs[which] as string, copy);
      spent[which] = (spent[which] ?? 0) + performance.now() - started;
    }
  }
  const records = pages.reduce((n, p) => n + p.records.length, 0);
  return {
    policedPerS: records / ((spent[0] ?? 0) / 1000),
    plainPerS: records / ((spent[1] ?? 0) / 1000),
  };
}

export async function fieldPolicyCost(records = 100_000): Promise<PolicyCostResult> {
  const { fieldPolicy, problems } = recordPolicyOf({
    HIRESYNC_FIELD_POLICY: POLICY,
    HIRESYNC_HASH_KEY: HASH_KEY,
  });
  if (problems.length > 0) throw new Error(problems.map((p) => p.message).join('; '));
  const dataset = new Dataset({ counts: { candidates: records } });
  const pages: Page[] = pagesOf(dataset, records).map((body, index) => ({
    number: index + 1,
    url: 'bench',
    body,
    records: JSON.parse(body) as unknown[],
    nextUrl: undefined,
  }));
  const resources = catalogFor(['candidates']);
  const passes: PolicyPass[] = [];
  const targets = [
    await freshDatabase('policy_on', { migrate: false }),
    await freshDatabase('policy_off', { migrate: false }),
  ];
  const dbs = targets.map((t) => createDatabase(t.url, { max: 2 })) as Kysely<Database>[];
  const stores = dbs.map(
    (db, i) => new KyselyRunStore(db, { resources, ...(i === 0 ? { fieldPolicy } : {}) }),
  );
  try {
    for (const db of dbs) {
      // Shared storage, as a deployment has it.
      await migrateControl(db);
      await migrateSchemas(db, ['public']);
      await ensureListResources(db, ['candidates']);
    }
    passes.push({ pass: 'inserts', ...(await pass(stores, dbs, pages)) });
    passes.push({ pass: 're-writes', ...(await pass(stores, dbs, pages)) });
  } finally {
    for (const db of dbs) await db.destroy();
    for (const t of targets) await t.drop();
  }
  return { records, passes, sync: await syncCost(records) };
}

/**
 * The same candidates synced end to end (a full run: the next page fetched
 * and policed while this one is written), with the policy and without, in
 * alternated rounds on fresh databases, from a simulator in its own process.
 */
async function syncCost(records: number, rounds = 2): Promise<PolicyCostResult['sync']> {
  const sim = await startSimulatorProcess([
    '--records',
    '0',
    '--candidates',
    String(records),
    '--cache-pages',
  ]);
  const seconds = { policed: 0, plain: 0 };
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const which of round % 2 === 0
        ? (['policed', 'plain'] as const)
        : (['plain', 'policed'] as const)) {
        const target = await freshDatabase(`policy_sync_${which}`, { migrate: false });
        const db = createDatabase(target.url, { max: 1 });
        await migrateAll(db);
        await db.destroy();
        const env = syncEnv(sim.url, target.url, {
          HIRESYNC_RESOURCES: 'candidates',
          HIRESYNC_PER_PAGE: '500',
          ...(which === 'policed'
            ? { HIRESYNC_FIELD_POLICY: POLICY, HIRESYNC_HASH_KEY: HASH_KEY }
            : {}),
        });
        try {
          // The first sync makes the tables and the typed view (seconds of
          // their own, the same either way); the second, a full run, re-reads
          // and re-writes every record: that one is timed.
          await childSync(env, ['candidates']);
          const result = await childSync(env, ['candidates'], 'full');
          if (!result.ok || result.records !== records) {
            throw new Error(`the ${which} sync stored ${result.records} of ${records} records`);
          }
          seconds[which] += result.seconds;
        } finally {
          await target.drop();
          await clearPrefix(env.HIRESYNC_REDIS_PREFIX as string);
        }
      }
    }
  } finally {
    await sim.stop();
  }
  return {
    policedPerS: (records * rounds) / seconds.policed,
    plainPerS: (records * rounds) / seconds.plain,
    rounds,
  };
}

/** One line per pass: both rates and their ratio. */
export function describeFieldPolicyCost(r: PolicyCostResult): string[] {
  const sync = `candidates, sync end to end (a second full run, ${r.sync.rounds} alternated rounds each): ${(r.sync.policedPerS / r.sync.plainPerS).toFixed(2)} x the sync without a policy (${fmt(r.sync.policedPerS)} vs ${fmt(r.sync.plainPerS)} records/s)`;
  return [sync].concat(
    r.passes.map(
      (p) =>
        `candidates page write, ${p.pass} (policed, validated and written, one page after another): ${(p.policedPerS / p.plainPerS).toFixed(2)} x the write without a policy (${fmt(p.policedPerS)} vs ${fmt(p.plainPerS)} records/s)`,
    ),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await fieldPolicyCost(Number(process.argv[2]) || 100_000);
  process.stdout.write(
    `field policy cost, ${fmt(r.records)} candidates in pages of ${PAGE}, policy ${POLICY}:\n${describeFieldPolicyCost(
      r,
    )
      .map((line) => `  ${line}`)
      .join('\n')}\n`,
  );
}
