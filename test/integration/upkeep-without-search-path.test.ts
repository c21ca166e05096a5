// The upkeep and read paths name the account in every statement, never the
// connection: on connections whose search_path is pg_catalog and pg_temp
// alone (no account's schema, no public), a typed-view refresh, a webhook's
// delete, an erasure, reapply-policy and the status reads each do their work
// on the account named, and leave the other account's rows alone.
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { recordPolicyOf } from '../../src/config/load-config.js';
import { resolvePolicy } from '../../src/privacy/policy-targets.js';
import { BUILT_IN_RESOURCES, RESOURCE_NAMES } from '../../src/resources/index.js';
import { defaultAccountShown } from '../../src/status/read-status.js';
import { readLatestRuns } from '../../src/warehouse/reports/latest-runs.js';
import type { Database } from '../../src/warehouse/tables.js';
import { refreshTypedView } from '../../src/warehouse/typed-views/refresh-typed-view.js';
import { eraseRecords } from '../../src/warehouse/upkeep/erase-records.js';
import { reapplyResource } from '../../src/warehouse/upkeep/policy-reapply.js';
import { applyWebhookDeletion } from '../../src/warehouse/upkeep/webhook-deletions.js';
import { targetsOf } from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { accounts, defer } = cleanupAfterEach();

/** A Kysely instance whose every connection searches pg_catalog and pg_temp only. */
function unpointedDatabase(url: string): Kysely<Database> {
  const pool = new pg.Pool({ connectionString: url, options: '-c search_path=pg_catalog,pg_temp' });
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  defer(() => db.destroy());
  return db;
}

function jobsPolicy() {
  const env = { HIRESYNC_FIELD_POLICY: 'jobs.name=hash', HIRESYNC_HASH_KEY: '11'.repeat(32) };
  const { fieldPolicy } = recordPolicyOf(env, RESOURCE_NAMES);
  if (!fieldPolicy) throw new Error('no policy');
  const resolved = resolvePolicy(fieldPolicy, BUILT_IN_RESOURCES);
  if ('problems' in resolved) throw new Error(resolved.problems.join('; '));
  return resolved.policy;
}

/** Each live job of `account`: its id and its name as stored. */
async function jobsOf(db: Kysely<Database>, account: string) {
  const { rows } = await sql<{ id: string; name: string | null; deleted: boolean }>`
    select id::text as id, data ->> 'name' as name, deleted_at is not null as deleted
    from hiresync.data_jobs where account = ${account} order by id`.execute(db);
  return rows;
}

describe('the upkeep and read paths on connections that point at no schema', () => {
  it("refresh a typed view, apply a webhook's delete, erase, reapply the policy and read status for the account named, and no other", async () => {
    const h = await accounts({ accounts: ['acme'], env: { HIRESYNC_RESOURCES: 'jobs' } });
    const outcomes = await h.sync(targetsOf(['default', 'acme'], ['jobs']), 'full');
    expect(outcomes.every((o) => o.ok)).toBe(true);
    const db = unpointedDatabase(h.database.url);
    const { rows: path } = await sql<{
      path: string;
    }>`select current_setting('search_path') as path`.execute(db);
    expect(path[0]?.path).toBe('pg_catalog,pg_temp');
    const jobs = BUILT_IN_RESOURCES.get('jobs');
    if (!jobs) throw new Error('no jobs');
    const defaultBefore = await jobsOf(db, 'default');

    await refreshTypedView(db, { view: 'jobs_flat', table: 'jobs', account: 'acme' }, undefined, {
      everyRecord: true,
    });
    const { rows: named } = await sql<{ name: string | null }>`
      select name from acme.jobs_flat order by id limit 1`.execute(db);
    expect(named[0]?.name).toEqual(expect.any(String));

    const [first, second] = await jobsOf(db, 'acme');
    if (!first || !second) throw new Error('acme has too few jobs');
    const deleted = await applyWebhookDeletion(db, {
      account: 'acme',
      target: jobs,
      ids: [first.id],
      lockName: 'acme:jobs',
    });
    expect(deleted).toEqual({ outcome: 'applied', deleted: 1 });
    const erased = await eraseRecords(db, {
      account: 'acme',
      resource: jobs,
      ids: [second.id],
      waitMs: 5000,
      origin: 'command',
      note: null,
    });
    expect(erased.map((e) => [e.id, e.rows])).toEqual([[second.id, 1]]);

    const reports = await reapplyResource(
      db,
      { account: 'acme', schema: 'acme', resource: jobs },
      jobsPolicy(),
      { batchSize: 50, rowWaitMs: 5000 },
    );
    expect(reports.find((r) => r.relation === 'jobs')?.rewritten).toBeGreaterThan(5);
    const acme = await jobsOf(db, 'acme');
    expect(acme.find((j) => j.id === first.id)?.deleted).toBe(true);
    expect(acme.some((j) => j.id === second.id)).toBe(false);
    for (const job of acme) expect(job.name).toMatch(/^hmac-sha256:/);
    // default's rows: not one touched.
    expect(await jobsOf(db, 'default')).toEqual(defaultBefore);

    const latest = await readLatestRuns(db, ['default', 'acme']);
    expect(latest.map((r) => [r.account, r.resource, r.lastRun.outcome]).sort()).toEqual([
      ['acme', 'jobs', 'succeeded'],
      ['default', 'jobs', 'succeeded'],
    ]);
    expect(await defaultAccountShown(db, false)).toBe(true);
  });
});
