import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type AccountsHarness, startAccountsHarness } from '../support/accounts-harness.js';

const harnesses: AccountsHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

describe('typed views of the reference lists', () => {
  it("show a source's strategy, a referrer's user and both lists' times as typed columns, in every account and all_accounts", async () => {
    const t = await startAccountsHarness({ accounts: ['alpha'] });
    harnesses.push(t);
    const outcomes = await t.sync(
      ['default', 'alpha'].flatMap((account) =>
        ['sources', 'referrers', 'job_boards'].map((resource) => ({ account, resource })),
      ),
    );
    expect(outcomes.every((o) => o.ok)).toBe(true);
    const db = t.database.db;
    for (const schema of ['public', 'alpha']) {
      // Each typed column reads what the record as sent (raw) holds, at its type.
      const { rows } = await sql<{ view: string; rows: number; same: boolean }>`
        select 'sources_flat' as view, count(*)::int as rows, bool_and(
            f.type_id is not distinct from (s.raw -> 'type' ->> 'id')::bigint
            and f.type_name is not distinct from s.raw -> 'type' ->> 'name'
            and f.public_name = s.public_name
            and f.created_at is not distinct from (s.raw ->> 'created_at')::timestamptz
            and f.updated_at is not distinct from (s.raw ->> 'updated_at')::timestamptz
            and f.changed_at = s.changed_at and f.synced_at = s.synced_at) as same
          from ${sql.id(schema, 'sources_flat')} f join ${sql.id(schema, 'sources')} s using (id)
        union all
        select 'referrers_flat', count(*)::int, bool_and(
            f.user_id is not distinct from (r.raw ->> 'user_id')::bigint
            and f.name = r.name
            and f.created_at is not distinct from (r.raw ->> 'created_at')::timestamptz)
          from ${sql.id(schema, 'referrers_flat')} f join ${sql.id(schema, 'referrers')} r using (id)
        union all
        select 'job_boards_flat', count(*)::int, bool_and(
            f.company_name = j.company_name
            and f.updated_at is not distinct from (j.raw ->> 'updated_at')::timestamptz)
          from ${sql.id(schema, 'job_boards_flat')} f join ${sql.id(schema, 'job_boards')} j using (id)`.execute(
        db,
      );
      expect(rows).toEqual([
        { view: 'sources_flat', rows: expect.any(Number), same: true },
        { view: 'referrers_flat', rows: expect.any(Number), same: true },
        { view: 'job_boards_flat', rows: expect.any(Number), same: true },
      ]);
      expect(rows.every((r) => r.rows > 0)).toBe(true);
    }
    // What the vendor aggregates candidate volume by: the strategy, typed, with no jsonb.
    const { rows: strategies } = await sql<{ type_name: string; n: number }>`
      select type_name, count(*)::int as n from public.sources_flat
      group by type_name order by type_name`.execute(db);
    expect(strategies.map((s) => s.type_name)).toEqual([
      'Prospecting',
      'Referral',
      'Third-party boards',
    ]);
    const { rows: users } = await sql<{ with_user: number; without: number }>`
      select count(user_id)::int as with_user, count(*) filter (where user_id is null)::int as without
      from public.referrers_flat`.execute(db);
    expect(users[0]?.with_user).toBeGreaterThan(0);
    expect(users[0]?.without).toBeGreaterThan(0);
    const { rows: union } = await sql<{ account: string; same: boolean }>`
      select u.account, count(*) = (select count(*) from public.sources_flat where u.account = 'default')
          + (select count(*) from alpha.sources_flat where u.account = 'alpha')
        and count(type_name) = count(*) as same
      from all_accounts.sources_flat u group by u.account order by u.account`.execute(db);
    expect(union).toEqual([
      { account: 'alpha', same: true },
      { account: 'default', same: true },
    ]);
  });
});
