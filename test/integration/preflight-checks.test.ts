// The checks before a command (src/status/preflight.ts): that hiresync's
// tables answer and which database this is (the Redis prefix's owner) are read
// in one statement (issue 35, item 5: fewer statements before `sync`'s runs
// and at the worker's start), and a role that may not run pg_control_system()
// still passes them, its Postgres system unknown.
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { checkConnections, prefixOwnerKey } from '../../src/status/preflight.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { probeSyncRuns } from '../../src/warehouse/reports/status-reads.js';
import { testRole } from '../support/leaky-reader.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { harness, defer } = cleanupAfterEach();

/** The texts of the statements pg clients made from now on send while `work` runs. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  const sent: string[] = [];
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    sent.push(String(typeof first === 'string' ? first : (first as { text?: unknown })?.text));
    return query.apply(this, args);
  };
  try {
    await work();
    return sent;
  } finally {
    proto.query = query;
  }
}

describe('the checks before a command', () => {
  it("read hiresync's tables and the database's identity in one statement, and claim the prefix with it", async () => {
    const t = await harness();
    const { rows } = await sql<{ name: string; system: string }>`
      select current_database() as name,
        (select system_identifier::text from pg_control_system()) as system`.execute(t.database.db);
    const prefix = t.config.redisPrefix;

    const sent = await statementsOf(async () => {
      const app = t.app();
      try {
        await checkConnections(app.db, app.redis, { prefix, claimPrefix: true });
      } finally {
        await app.close();
      }
    });

    expect(sent).toHaveLength(1);
    const app = t.app();
    defer(() => app.close());
    expect(JSON.parse((await app.redis.get(prefixOwnerKey(prefix))) as string)).toEqual({
      database: rows[0]?.name,
      system: rows[0]?.system,
    });
  });

  it('pass for a role that may not run pg_control_system(), its system unknown', async () => {
    const t = await harness();
    const db = t.database.db;
    const { role, drop } = await testRole(db, 'nocontrol');
    defer(drop);
    await sql.raw(`grant usage on schema hiresync to ${role}`).execute(db);
    await sql.raw(`grant select on hiresync.data_sync_runs to ${role}`).execute(db);
    await sql`revoke execute on function pg_catalog.pg_control_system() from public`.execute(db);
    const url = new URL(t.database.url);
    url.searchParams.set('options', `-c role=${role}`);
    const asRole = createDatabase(url.href);
    defer(() => asRole.destroy());
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(db);
    await expect(sql`select pg_control_system()`.execute(asRole)).rejects.toMatchObject({
      code: '42501',
    });

    expect(await probeSyncRuns(asRole)).toEqual({ database: rows[0]?.name, system: null });
  });
});
