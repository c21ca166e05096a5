import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/warehouse/tables.js';
import { type AnalyticsView, VIEW_COLUMNS } from '../support/analytics-reference/columns.js';
import { compareRows } from '../support/analytics-reference/compare-rows.js';
import { type EdgeWorld, edgeWorld } from '../support/analytics-reference/edge-world.js';
import {
  type AnalyticsRecords,
  type ApiRecord,
  expectedAnalytics,
} from '../support/analytics-reference/index.js';
import { analyticsSchemaOf, readViews, VIEW_LISTS } from '../support/analytics-views.js';
import { cleanupAfterEach } from '../support/lifecycle.js';

// The edge cases the unit tests of the reference cover, written into the
// shared tables as runs would have stored them, and every view compared row
// for row with the reference's rows (the simulator's world need not hold
// each of them: this world holds them all).

const { accounts } = cleanupAfterEach();

/** Lists stored as sent in hiresync.data_NAME_data: those of `@analytics` the views read. */
const LISTS = VIEW_LISTS as readonly (keyof AnalyticsRecords)[];

async function insertJson(
  db: Kysely<Database>,
  table: string,
  account: string,
  record: ApiRecord,
  deleted: boolean,
): Promise<void> {
  await sql`insert into ${sql.id('hiresync', table)} (account, id, data, deleted_at)
    values (${account}, ${Number(record.id)}, ${JSON.stringify(record)}::jsonb, ${deleted ? sql`now()` : null})`.execute(
    db,
  );
}

/** Writes `world` into the shared tables for `account`: listed records live, the others deleted. */
async function storeWorld(db: Kysely<Database>, account: string, world: EdgeWorld): Promise<void> {
  const both = (name: keyof AnalyticsRecords) => [
    ...(world.records[name] as ApiRecord[]).map((r) => ({ r, deleted: false })),
    ...(world.deleted[name] ?? []).map((r) => ({ r, deleted: true })),
  ];
  for (const name of LISTS) {
    for (const { r, deleted } of both(name))
      await insertJson(db, `data_${name}_data`, account, r, deleted);
  }
  for (const name of ['jobs', 'job_posts'] as const) {
    for (const { r, deleted } of both(name))
      await insertJson(db, `data_${name}`, account, r, deleted);
  }
  for (const { r, deleted } of both('tracking_links')) {
    await sql`insert into hiresync.data_tracking_links
        (account, id, token, job_id, job_post_id, job_board_id, credited_to_id, source_id, raw, deleted_at)
      values (${account}, ${Number(r.id)}, ${r.token as string}, ${r.job_id ?? null}, ${r.job_post_id ?? null},
        ${r.job_board_id ?? null}, ${r.referrer_id ?? null}, ${r.source_id ?? null}, ${JSON.stringify(r)}::jsonb,
        ${deleted ? sql`now()` : null})`.execute(db);
  }
  for (const { r } of both('sources')) {
    await sql`insert into hiresync.data_sources (account, id, public_name, raw)
      values (${account}, ${Number(r.id)}, ${r.name as string}, ${JSON.stringify(r)}::jsonb)`.execute(
      db,
    );
  }
  for (const { r } of both('referrers')) {
    await sql`insert into hiresync.data_referrers (account, id, name, raw)
      values (${account}, ${Number(r.id)}, ${r.name as string}, ${JSON.stringify(r)}::jsonb)`.execute(
      db,
    );
  }
  for (const { r } of both('job_boards')) {
    await sql`insert into hiresync.data_job_boards (account, id, company_name, raw)
      values (${account}, ${Number(r.id)}, ${r.company_name as string}, ${JSON.stringify(r)}::jsonb)`.execute(
      db,
    );
  }
  for (const label of world.records.demographic_labels) {
    await sql`insert into hiresync.data_demographic_labels (account, kind, id, label)
      values (${account}, ${label.kind}, ${label.id}::bigint, ${label.label})`.execute(db);
  }
  for (const v of world.stageHistory) {
    await sql`insert into hiresync.data_application_stages_history (account, id, valid_from, valid_to, deleted, data)
      values (${account}, ${v.id}, ${v.from}::timestamptz, ${v.to}::timestamptz, false, ${JSON.stringify(v.data)}::jsonb)`.execute(
      db,
    );
  }
}

describe('the analytics views over a world of every edge case', () => {
  it('answer, view by view, the rows the reference computes from the listed records', async () => {
    const h = await accounts({ accounts: ['edge'], records: 1 });
    const world = edgeWorld();
    await storeWorld(h.database.db, 'edge', world);
    const answers = await readViews(h.database.db, analyticsSchemaOf('edge'));
    const expected = expectedAnalytics(world.records, {
      now: answers.now,
      stageHistory: world.stageHistory.map((v) => ({
        id: String(v.id),
        validFrom: Date.parse(v.from),
        record: v.data,
      })),
    });
    const mismatches = (Object.keys(VIEW_COLUMNS) as AnalyticsView[]).flatMap((view) =>
      compareRows(view, VIEW_COLUMNS[view], expected[view], answers.views[view]),
    );
    expect(mismatches, `${mismatches.length} mismatches`).toEqual([]);
  });
});
