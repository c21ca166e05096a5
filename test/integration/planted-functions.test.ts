import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUILT_IN_RESOURCES } from '../../src/resources/index.js';
import type { Page } from '../../src/sync/ports.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { KyselyRunStore } from '../../src/warehouse/runs/run-store.js';
import {
  type AccountsHarness,
  startAccountsHarness,
  targetsOf,
} from '../support/accounts-harness.js';
import { adminQuery } from '../support/databases.js';

/**
 * CVE-2018-1058: a role that may create objects where hiresync writes (an
 * account's schema, or `public` in a database made before Postgres 15)
 * plants functions with the exact argument types of the polymorphic ones
 * hiresync's statements call. Searched before pg_catalog's, they would run
 * with hiresync's privileges; each raises, so a run that called one fails.
 */
const PLANTED = [
  ['unnest', 'bigint[]', 'setof bigint'],
  ['cardinality', 'int[]', 'int'],
  ['to_jsonb', 'text', 'jsonb'],
] as const;

const RESOURCES = ['jobs', 'job_posts', 'tracking_links', 'job_boards', 'sources', 'referrers'];

let h: AccountsHarness;
const planter = `planter_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

beforeAll(async () => {
  h = await startAccountsHarness({
    accounts: ['acme'],
    records: 40,
    env: { HIRESYNC_RESOURCES: RESOURCES.join(','), HIRESYNC_PER_PAGE: '15' },
  });
  const admin = inject('databaseUrl');
  await adminQuery(admin, [`create role ${planter}`]);
  await sql`grant usage, create on schema public, acme to ${sql.id(planter)}`.execute(
    h.database.db,
  );
  const as = new pg.Client({ connectionString: h.database.url });
  await as.connect();
  try {
    await as.query(`set role ${planter}`);
    for (const schema of ['public', 'acme']) {
      for (const [name, args, returns] of PLANTED) {
        await as.query(`create function ${schema}.${name}(${args}) returns ${returns}
          language plpgsql as $$ begin raise exception 'planted ${schema}.${name} was called'; end $$`);
      }
    }
  } finally {
    await as.end();
  }
}, 60_000);

afterAll(async () => {
  await sql`drop owned by ${sql.id(planter)}`.execute(h.database.db).catch(() => {});
  await h?.close();
  await adminQuery(inject('databaseUrl'), [`drop role if exists ${planter}`]).catch(() => {});
});

/** A page of jobs: a good record, one validation rejects, and (`refused`) one only Postgres refuses. */
function page(number: number, refused: boolean): Page {
  const nul = refused ? ', {"id": 9002, "title": "nul \\u0000 here"}' : '';
  const body = `[{"id": 9001, "title": "kept"}, {"id": "not an id"}${nul}]`;
  return {
    number,
    url: 'https://api.example/v3/jobs',
    nextUrl: undefined,
    body,
    records: JSON.parse(body),
  };
}

describe('functions planted in public and in an account schema', () => {
  it('are never called by full and incremental runs of default and of a registered account', async () => {
    const targets = targetsOf(['default', 'acme'], RESOURCES);
    // A full run, then incremental ones (auto: a full run has completed).
    for (const mode of ['full', 'auto', 'auto'] as const) {
      const outcomes = await h.sync(targets, mode);
      expect(
        outcomes.filter((o) => !o.ok),
        mode,
      ).toEqual([]);
    }
    for (const account of ['default', 'acme']) {
      expect((await h.liveIds(account, 'jobs')).sort()).toEqual(
        h.expectedIds(account, 'jobs').sort(),
      );
    }
  }, 120_000);

  it("are never called by a page's rejected records, its record-by-record fallback or the sweep", async () => {
    const db = createDatabase(h.database.url);
    try {
      for (const account of ['default', 'acme']) {
        const store = new KyselyRunStore(db, { resources: BUILT_IN_RESOURCES, account });
        const run = await store.createRun({ resource: 'jobs', mode: 'full' });
        const written = await store.writePage('jobs', run, page(1, true));
        expect(written.rejected.map((r) => r.index)).toEqual([1, 2]);
        const again = await store.writePage('jobs', run, page(2, false), undefined, {
          skipUnchanged: true,
        });
        expect(again.unchanged).toBe(1);
        await store.sweepDeletions('jobs', run, { allowMassDelete: true });
        await store.completeRun('jobs', run);
      }
    } finally {
      await db.destroy();
    }
  }, 60_000);
});
