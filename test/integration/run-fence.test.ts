import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { runKey } from '../../src/account-name.js';
import { createDatabase } from '../../src/warehouse/database.js';
import { runFenceKey, runLockKey } from '../../src/warehouse/lock-keys.js';
import { ResourceLock } from '../../src/warehouse/runs/resource-lock.js';
import { createTestDatabase } from '../support/databases.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

describe("a run lock's fence", () => {
  it('leaves no run lock behind on a pooled connection when it fails (a lock_timeout in DATABASE_URL options)', async () => {
    const database = await createTestDatabase(inject('databaseUrl'));
    defer(() => database.drop());
    const url = new URL(database.url);
    url.searchParams.set('options', '-c lock_timeout=300ms');
    const worker = createDatabase(url.href);
    defer(() => worker.destroy());
    const name = runKey('default', 'jobs');
    // A pooled page of a run whose session died holds the fence shared.
    const page = await database.db.startTransaction().execute();
    await sql`select pg_advisory_xact_lock_shared(${runFenceKey(name).toString()}::bigint)`.execute(
      page,
    );
    const lock = new ResourceLock(worker);
    expect(await lock.tryAcquire(name)).toBeUndefined();
    await page.commit().execute();
    // The page is gone: nothing holds the run lock, so a worker must get it.
    const key = BigInt.asUintN(64, runLockKey(name));
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_catalog.pg_locks where locktype = 'advisory'
        and classid = ${String(key >> 32n)}::bigint::oid and objid = ${String(key & 0xffffffffn)}::bigint::oid
        and objsubid = 1 and granted`.execute(database.db);
    expect(rows[0]?.n, 'the run lock leaked on a pooled connection').toBe(0);
    const other = await new ResourceLock(database.db).tryAcquire(name);
    defer(() => other?.release());
    expect(other).toBeDefined();
  });

  it('held by a page whose process went silent, is let go once the page has been idle for the dead-peer time', async () => {
    const database = await createTestDatabase(inject('databaseUrl'));
    defer(() => database.drop());
    const name = runKey('default', 'jobs');
    const lock = new ResourceLock(database.db, { heartbeatMs: 60_000, deadPeerMs: 1000 });
    const held = await lock.tryAcquire(name);
    defer(() => held?.release());
    // A page on a pooled connection checks the lock, taking the fence, then its process says nothing more.
    const page = await database.db.startTransaction().execute();
    await lock.assertHeld(name, page);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await expect(sql`select 1`.execute(page)).rejects.toThrow();
    await page
      .rollback()
      .execute()
      .catch(() => {});
    // Nothing holds the fence any more: a taker of the lock would not wait.
    const fence = runFenceKey(name).toString();
    const { rows } = await sql<{ free: boolean }>`
      select pg_try_advisory_xact_lock(${fence}::bigint) as free`.execute(database.db);
    expect(rows[0]?.free).toBe(true);
  });
});
