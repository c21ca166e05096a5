import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { main } from '../../src/main.js';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { captureIo } from '../support/capture-io.js';
import { createTestDatabase } from '../support/databases.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { clearRedisPrefix, servicesEnv } from '../support/test-env.js';

const { defer } = cleanupAfterEach();

describe('accounts add NAME where schema NAME belongs to another Kysely application', () => {
  it("refuses it before registering anything, so no later `remove --drop-data` can drop that application's tables", async () => {
    const t = await createTestDatabase(inject('databaseUrl'));
    defer(() => t.drop());
    await migrateAll(t.db);
    // Another app sharing the database keeps its tables, and its own Kysely
    // migrations table, in schema billing.
    await sql`create schema billing`.execute(t.db);
    await sql`create table billing.kysely_migration (name varchar(255) primary key, timestamp varchar(255) not null)`.execute(
      t.db,
    );
    await sql`insert into billing.kysely_migration values ('2024_01_invoices', '2024-01-01T00:00:00Z')`.execute(
      t.db,
    );
    await sql`create table billing.invoices (id bigint primary key, amount numeric)`.execute(t.db);
    await sql`insert into billing.invoices values (1, 99.5)`.execute(t.db);
    const env = {
      ...servicesEnv(t.url),
      HIRESYNC_BASE_URL: 'https://api.example.com',
      HIRESYNC_AUTH_URL: 'https://auth.example.com',
    };
    defer(() => clearRedisPrefix(env));
    const add = captureIo('billing-secret\n');
    const code = await main(
      ['accounts', 'add', 'billing', '--client-id', 'x', '--no-test'],
      env,
      add,
    );
    expect(code, add.err()).toBe(1);
    const { rows: registered } = await sql`select name from hiresync.accounts`.execute(t.db);
    expect.soft(registered, 'accounts registered after the refused add').toEqual([]);
    // The operator cleans up what the failed add left, as its message suggests.
    await main(['accounts', 'remove', 'billing', '--drop-data'], env, captureIo());
    const { rows } = await sql`select to_regclass('billing.invoices')::text as t`.execute(t.db);
    expect(rows, "the other application's table").toEqual([{ t: 'billing.invoices' }]);
  });
});
