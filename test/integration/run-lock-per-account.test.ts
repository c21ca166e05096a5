import { type Kysely, sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { runKey } from '../../src/account-name.js';
import { ResourceLock } from '../../src/warehouse/runs/resource-lock.js';
import type { Database } from '../../src/warehouse/tables.js';
import { createTestDatabase } from '../support/databases.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer } = cleanupAfterEach();

describe("the Postgres lock of one account's run", () => {
  it("never keeps another account's run of another resource from starting", async () => {
    // Two customers of a large deployment (names as `simulate --accounts N` makes them).
    const a = runKey('acct17668', 'jobs');
    const b = runKey('acct46513', 'tracking_links');
    // Today both hash (FNV-1a, 31 bits) to advisory-lock key 1553698104.
    const database = await createTestDatabase(inject('databaseUrl'));
    defer(() => database.drop());
    const worker1 = new ResourceLock(database.db);
    const worker2 = new ResourceLock(database.db);
    const held = await worker1.tryAcquire(a);
    expect(held).toBeDefined();
    defer(() => held?.release());
    const other = await worker2.tryAcquire(b);
    defer(() => other?.release());
    expect(other, `${b} could not start while ${a} ran`).toBeDefined();
  });
});

/** The pid and TCP settings of the pooled connection `db` hands out next. */
async function nextPooled(db: Kysely<Database>) {
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ pid: number; settings: string }>`
      select pg_backend_pid() as pid, concat_ws(',',
        current_setting('tcp_keepalives_idle'), current_setting('tcp_keepalives_interval'),
        current_setting('tcp_keepalives_count'), current_setting('tcp_user_timeout')) as settings`.execute(
      conn,
    );
    return rows[0] as { pid: number; settings: string };
  });
}

describe("the dead-peer settings of a lock's connection", () => {
  it("are back to the server's once the connection returns to the pool, lock taken or not", async () => {
    const database = await createTestDatabase(inject('databaseUrl'));
    defer(() => database.drop());
    const defaults = (await nextPooled(database.db)).settings;
    const worker1 = new ResourceLock(database.db, { deadPeerMs: 6000 });
    const worker2 = new ResourceLock(database.db, { deadPeerMs: 6000 });
    const held = await worker1.tryAcquire('jobs');
    if (!held) throw new Error('the lock of jobs was not taken');
    defer(() => held.release());
    const lockPid = (
      await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(held.session)
    ).rows[0]?.pid;
    expect((await nextPooled(held.session)).settings).not.toBe(defaults);
    // Not taken: the attempt's connection goes back to the pool (pg's pool hands out the last one back).
    expect(await worker2.tryAcquire('jobs')).toBeUndefined();
    const afterRefusal = await nextPooled(database.db);
    expect(afterRefusal.pid).not.toBe(lockPid);
    expect(afterRefusal.settings).toBe(defaults);
    await held.release();
    const afterRelease = await nextPooled(database.db);
    expect(afterRelease).toEqual({ pid: lockPid, settings: defaults });
  });
});
