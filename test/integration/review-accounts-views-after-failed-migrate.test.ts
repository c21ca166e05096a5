import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { startAccountsHarness } from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { captureIo } from '../unit/commands/capture-io.js';

const { defer } = cleanupAfterEach();

describe('hiresync migrate failing on one account schema', () => {
  it('leaves the all_accounts views of every other account in place (that account left out, with a warning)', async () => {
    const h = await startAccountsHarness({ accounts: ['alpha', 'beta'] });
    defer(() => h.close());
    const db = h.database.db;
    expect(await h.sync([{ account: 'beta', resource: 'jobs' }])).toMatchObject([{ ok: true }]);
    // A new migration arrives (0004 stands in for it: pending in public, alpha and
    // beta), and alpha's schema is one it cannot apply to.
    for (const schema of ['public', 'alpha', 'beta']) {
      await sql`delete from ${sql.id(schema, 'kysely_migration')} where name = '0004_drop_reference_constraints'`.execute(
        db,
      );
    }
    await sql`alter table alpha.tracking_links rename to tracking_links_moved`.execute(db);
    const io = captureIo();
    const code = await main(['migrate'], { DATABASE_URL: h.database.url }, io);
    expect(code, io.err()).toBe(1);
    const { rows } = await sql<{ view: string | null }>`
      select to_regclass('all_accounts.jobs')::text as view`.execute(db);
    expect(rows, 'all_accounts.jobs after the failed migrate').toEqual([
      { view: 'all_accounts.jobs' },
    ]);
    const { rows: accounts } = await sql<{ account: string }>`
      select distinct account from all_accounts.jobs order by account`.execute(db);
    expect(accounts.map((r) => r.account)).toContain('beta');
  });
});
