import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { ANALYTICS_SET } from '../../src/config/resource-names.js';
import {
  ANALYTICS_RESOURCES,
  BUILT_IN_RESOURCES,
  catalogOf,
  declarationOf,
} from '../../src/resources/index.js';
import type { Dataset } from '../../src/simulator/dataset.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

// The analytics lists synced as HIRESYNC_RESOURCES=@default,@analytics names
// them. What the simulator's records hold is its own affair: this test
// compares what hiresync stores with what its declarations accept of them.

let h: SyncHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** What the simulator serves of `resource` and its declaration stores, by id (text). */
function storable(ds: Dataset, resource: string): Map<string, unknown> {
  const declaration = declarationOf(ANALYTICS_RESOURCES, resource);
  const out = new Map<string, unknown>();
  for (const i of ds.presentIndexes(resource)) {
    const record = ds.record(resource, i);
    if (declaration.validate(record) === undefined) out.set(String(ds.idOf(resource, i)), record);
  }
  return out;
}

/** The first-page targets of `resource`'s list requests, and those with a cursor. */
function targetsOf(received: readonly string[], resource: string) {
  const mine = received
    .map((t) => new URL(t, 'http://sim'))
    .filter((u) => u.pathname.endsWith(`/${resource}`));
  return {
    first: mine.filter((u) => !u.searchParams.has('cursor')),
    cursors: mine.filter((u) => u.searchParams.has('cursor')),
  };
}

describe('the analytics resources (@analytics)', () => {
  it('are stored in NAME_data with views NAME, NAME_history and NAME_flat; constants only on first pages; undated lists full every run', async () => {
    const counts = Object.fromEntries(ANALYTICS_SET.map((name) => [name, 120]));
    const harness = await startSyncHarness({
      simulator: {
        dataset: {
          resources: catalogOf(...BUILT_IN_RESOURCES.values(), ...ANALYTICS_RESOURCES.values()),
          counts,
        },
      },
      env: { HIRESYNC_PER_PAGE: '50', HIRESYNC_RESOURCES: '@default,@analytics' },
    });
    h = harness;
    const ds = harness.sim.dataset;
    expect(harness.config.resources.slice(-ANALYTICS_SET.length)).toEqual(ANALYTICS_SET);

    const first = await harness.sync([...ANALYTICS_SET]);
    for (const [i, name] of ANALYTICS_SET.entries()) {
      expect(storable(ds, name).size, name).toBeGreaterThan(0);
      expect(first[i], name).toMatchObject({
        ok: true,
        summary: { resource: name, mode: 'full', records: storable(ds, name).size },
      });
    }
    const db = harness.database.db;
    for (const name of ANALYTICS_SET) {
      const { rows } = await sql<{ id: string; data: unknown }>`
        select id, data from ${sql.id('public', name)} where deleted_at is null`.execute(db);
      expect(new Map(rows.map((r) => [r.id, r.data])), name).toEqual(storable(ds, name));
    }
    const { rows: relations } = await sql<{ relname: string }>`
      select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('v', 'r')`.execute(db);
    const names = relations.map((r) => r.relname);
    for (const name of ANALYTICS_SET) {
      expect(names, name).toEqual(
        expect.arrayContaining([name, `${name}_data`, `${name}_history`, `${name}_flat`]),
      );
      const { rows } = await sql<{ n: string }>`
        select count(*) as n from ${sql.id('public', `${name}_flat`)}`.execute(db);
      expect(Number(rows[0]?.n), `${name}_flat`).toBe(storable(ds, name).size);
    }

    // The constants went on each first page, never beside a cursor (the
    // simulator answers 422 to that, and every run succeeded over 3 pages).
    const received = harness.sim.stats.receivedTargets;
    for (const [resource, key] of [
      ['rejection_reasons', 'include_defaults'],
      ['users', 'show_service_accounts'],
    ] as const) {
      const { first: firsts, cursors } = targetsOf(received, resource);
      expect(firsts.map((u) => u.searchParams.get(key))).toEqual(['true']);
      expect(cursors.length).toBeGreaterThan(0);
      for (const u of cursors) expect([...u.searchParams.keys()]).toEqual(['cursor']);
    }

    // The next runs when due: incremental by updated_at, but the two lists
    // without a date filter, read in full.
    const second = await harness.sync([...ANALYTICS_SET]);
    const undated = ['demographic_questions', 'demographic_answer_options'];
    for (const [i, name] of ANALYTICS_SET.entries()) {
      expect(second[i], name).toMatchObject({
        ok: true,
        summary: { mode: undated.includes(name) ? 'full' : 'incremental' },
      });
    }
    const after = harness.sim.stats.receivedTargets;
    const applications = targetsOf(after, 'applications').first.at(-1);
    expect(applications?.searchParams.get('updated_at')).toMatch(/^gte\|/);
    const questions = targetsOf(after, 'demographic_questions').first;
    expect(questions).toHaveLength(2);
    expect(questions.every((u) => !u.searchParams.has('updated_at'))).toBe(true);
  });
});
