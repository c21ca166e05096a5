import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type AccountsHarness, startAccountsHarness } from '../support/accounts-harness.js';

const harnesses: AccountsHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

/** Every column of every relation of `schemas` that has no comment, as `schema.relation.column`. */
async function uncommented(
  db: AccountsHarness['database']['db'],
  schemas: readonly string[],
): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select n.nspname || '.' || c.relname || '.' || a.attname as name
    from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = any(${[...schemas]}::text[]) and c.relkind in ('r', 'p', 'v', 'm', 'f')
      and coalesce(col_description(c.oid, a.attnum), '') = ''
    order by 1`.execute(db);
  return rows.map((r) => r.name);
}

describe('column comments', () => {
  it('are on every column of every relation of every account schema and all_accounts, before and after a sync', async () => {
    const t = await startAccountsHarness({
      accounts: ['alpha'],
      env: { HIRESYNC_RESOURCES: 'jobs,job_posts,tracking_links,offers' },
    });
    harnesses.push(t);
    const schemas = ['public', 'alpha', 'all_accounts'];
    // Made by migrate, before any run (the list resource's relations by its first run).
    expect(await uncommented(t.database.db, schemas)).toEqual([]);
    const outcomes = await t.sync(
      ['default', 'alpha'].flatMap((account) =>
        ['tracking_links', 'offers', 'jobs', 'job_boards', 'sources', 'referrers'].map(
          (resource) => ({ account, resource }),
        ),
      ),
    );
    expect(outcomes.every((o) => o.ok)).toBe(true);
    // A list resource's views and typed view, tracking_links_flat, the typed
    // views a refresh filled, and their unions.
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_catalog.pg_attribute
      where attrelid = 'alpha.offers_flat'::regclass and attnum > 0`.execute(t.database.db);
    expect(rows[0]?.n).toBeGreaterThan(10);
    expect(await uncommented(t.database.db, schemas)).toEqual([]);
  });
});
