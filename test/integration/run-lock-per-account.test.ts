import { describe, expect, inject, it } from 'vitest';
import { runKey } from '../../src/account-name.js';
import { ResourceLock } from '../../src/warehouse/runs/resource-lock.js';
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
