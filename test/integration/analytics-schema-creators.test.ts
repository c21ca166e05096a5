// Roles that may create objects in an analytics schema hiresync made
// (docs/operating.md, "Roles"): such a role can put a function of its own in
// front of the account's analysts (an overload of pipeline_as_of taking text
// wins a call with a quoted date, and runs as the analyst), so migrate warns
// of it as of an account schema. A schema of the name that hiresync did not
// make is not hiresync's to judge: no warning.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateAll } from '../../src/warehouse/setup/migrate-all.js';
import { testRole } from '../support/leaky-reader.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer, accounts } = cleanupAfterEach();

describe('roles that may create objects in an analytics schema', () => {
  it("are named by migrate's warnings, once per analytics schema hiresync made, never for one it did not make", async () => {
    const h = await accounts({ accounts: ['globex', 'initech'], records: 1 });
    const db = h.database.db;
    const creators = async () =>
      (await migrateAll(db)).warnings.filter((w) => w.includes('can create objects'));
    expect(await creators()).toEqual([]);
    const { role, drop } = await testRole(db, 'planter');
    defer(drop);
    await sql.raw(`grant create on schema globex_analytics to ${role}`).execute(db);
    // A DBA's own schema of the name, open to every role: not hiresync's.
    await sql`drop schema initech_analytics cascade`.execute(db);
    await sql`create schema initech_analytics`.execute(db);
    await sql`grant create on schema initech_analytics to public`.execute(db);

    expect(await creators()).toEqual([
      `role ${role} can create objects in schema globex_analytics, which hiresync writes: such a role can put objects of its own in front of the readers of the schema and in hiresync's way. Revoke it unless you mean it: revoke create on schema globex_analytics from ${role};`,
    ]);
  });
});
