import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { deletePrefix } from '../../src/queue/redis.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { runAccounts } from '../support/accounts-cli.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { seenBefore } from '../support/seen-before.js';

const CLIENT_SECRET = `client-secret-${randomUUID()}`;
// These tests are about `accounts remove --drop-data` on registered accounts whose URLs nothing
// answers at: every `accounts add` passes --no-test (the test of an account's
// credentials is covered by accounts-test.test.ts).
let t: TestDatabase;
let redis: Redis;
let prefix: string;
let env: Record<string, string>;

beforeEach(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
  redis = new Redis(inject('redisUrl'));
  prefix = `test-${randomUUID()}`;
  env = {
    DATABASE_URL: t.url,
    REDIS_URL: inject('redisUrl'),
    HIRESYNC_REDIS_PREFIX: prefix,
    HIRESYNC_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    HIRESYNC_BASE_URL: 'https://api.example.com/harvest',
    HIRESYNC_AUTH_URL: 'https://auth.example.com/oauth',
  };
});
afterEach(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await t.drop();
});

function accounts(argv: string[], input = '') {
  return runAccounts(env, argv, input);
}

async function add(name: string) {
  const r = await accounts(
    ['add', '--no-test', name, '--client-id', `${name}-client`, '--sub', '42'],
    `${CLIENT_SECRET}\n`,
  );
  expect(r).toMatchObject({ code: 0, stderr: '' });
}

describe('accounts remove --drop-data with an analyst view inside schema all_accounts', () => {
  it("names it and refuses, and --cascade drops it; views built on hiresync's own all_accounts views are not counted", async () => {
    await add('acme');
    await sql`create view all_accounts.acme_only as select id from acme.jobs`.execute(t.db);
    // Built on hiresync's union, which is rebuilt without acme: it survives.
    await sql`create view all_accounts.job_count as select count(*) as n from all_accounts.jobs`.execute(
      t.db,
    );
    const plain = await accounts(['remove', 'acme', '--drop-data', '--yes']);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('view all_accounts.acme_only');
    expect(plain.stderr).not.toContain('all_accounts.job_count');
    expect(plain.stderr).not.toContain('view all_accounts.jobs');
    const cascaded = await accounts(['remove', 'acme', '--drop-data', '--yes', '--cascade']);
    expect(cascaded).toMatchObject({ code: 0, stderr: '' });
    expect(cascaded.stdout).toContain(
      'dropped schema acme; also dropped: view all_accounts.acme_only',
    );
    const { rows } = await sql<{ name: string }>`
      select table_name as name from information_schema.views
      where table_schema in ('acme', 'all_accounts') and table_name in ('acme_only', 'job_count', 'jobs')
      order by 1`.execute(t.db);
    expect(rows.map((r) => r.name)).toEqual(['job_count', 'jobs']);
  });
});

describe('accounts remove --drop-data while an analyst creates a view on the schema', () => {
  it('never drops, without --cascade, a view committed between the check and the drop', async () => {
    await add('acme');
    await sql`create schema reporting`.execute(t.db);
    const analyst = createDatabase(t.url);
    try {
      const removed = await analyst.connection().execute(async (conn) => {
        // The view is created but not yet committed when the removal checks.
        await sql`begin`.execute(conn);
        await sql`create view reporting.late as select id from acme.jobs`.execute(conn);
        const removal = accounts(['remove', 'acme', '--drop-data', '--yes']);
        // Until the removal waits for a lock the analyst's transaction holds;
        // a removal that ended first never met the uncommitted view.
        const waited = await seenBefore(removal, async () => {
          const { rows } = await sql<{ n: number }>`
            select count(*)::int as n from pg_locks
            where not granted
              and database = (select oid from pg_database where datname = current_database())`.execute(
            conn,
          );
          return (rows[0]?.n ?? 0) > 0;
        });
        await sql`commit`.execute(conn);
        return { waited, ...(await removal) };
      });
      expect(removed.waited, "the removal never waited for the analyst's lock").toBe(true);
      expect(removed.code).toBe(1);
      expect(removed.stderr).toContain('view reporting.late');
      expect(removed.stderr).toContain('nothing was removed');
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from information_schema.views
        where table_schema = 'reporting' and table_name = 'late'`.execute(t.db);
      expect(rows[0]?.n).toBe(1);
    } finally {
      await analyst.destroy();
    }
  });
});
