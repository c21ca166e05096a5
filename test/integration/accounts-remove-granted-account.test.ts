// `accounts remove NAME --drop-data` of an account granted to a role with
// `accounts grant` (../shared/interface.md, "Tenancy"): the default privileges
// that grant left in the account's schemas are of those schemas, not objects
// outside them, so they go with them; an account added again under the name
// is granted to no one.
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runAccounts } from '../support/accounts-cli.js';
import { testRole } from '../support/leaky-reader.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

const { defer, accounts } = cleanupAfterEach();

describe('accounts remove --drop-data of an account granted to a role', () => {
  it('drops it without --cascade, naming nothing as dropped with it, and the name added again is granted to no one', async () => {
    const h = await accounts({ accounts: ['globex'], records: 1 });
    const db = h.database.db;
    const { role, drop } = await testRole(db);
    defer(drop);
    expect((await runAccounts(h.env, ['grant', 'globex', role])).code).toBe(0);

    const removed = await runAccounts(h.env, ['remove', 'globex', '--drop-data', '--yes']);
    expect(removed).toMatchObject({ code: 0, stderr: '' });
    expect(removed.stdout).not.toContain('also dropped');
    const { rows } = await sql<{ n: string }>`
      select count(*)::text as n from pg_default_acl d, aclexplode(d.defaclacl) x
      where x.grantee = to_regrole(${role})`.execute(db);
    expect(rows[0]?.n).toBe('0');

    expect(
      await runAccounts(
        h.env,
        ['add', '--no-test', 'globex', '--client-id', 'globex-client', '--sub', '42'],
        'globex-secret\n',
      ),
    ).toMatchObject({ code: 0 });
    const client = new pg.Client({ connectionString: h.database.url });
    await client.connect();
    defer(() => client.end());
    await client.query(`set role ${role}`);
    for (const relation of ['globex.jobs', 'globex_analytics.source_of_hire']) {
      await expect(client.query(`select * from ${relation}`)).rejects.toThrow(
        /permission denied for schema/,
      );
    }
  });
});
