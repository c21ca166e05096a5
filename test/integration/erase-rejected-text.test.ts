// An erasure reaches the rejected records Postgres could not hold as jsonb
// (kept as their JSON text) whatever form their id takes there: a string of
// digits (the wrong type they were rejected for) or a number written with an
// exponent, as it reaches those kept as jsonb.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_RESOURCES } from '../../src/resources/index.js';
import { createRun } from '../../src/warehouse/runs/sync-runs.js';
import { eraseRecords } from '../../src/warehouse/upkeep/erase-records.js';
import { useEmptyWarehouse } from '../support/warehouse-fixture.js';

const fx = useEmptyWarehouse();
const jobs = BUILT_IN_RESOURCES.get('jobs');

describe('erasing the rejected records kept as JSON text', () => {
  it('erases those whose id is a string of digits or a number with an exponent, and no other', async () => {
    if (!jobs) throw new Error('no jobs resource');
    const runId = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
    // \u0000 makes Postgres refuse each record as jsonb: the rejected ones are kept as text.
    const body =
      '[{"id":"123","name":"Ada\\u0000 Lovelace"},{"id":1.24e2,"name":"Grace\\u0000 Hopper"},{"id":"125","name":"Alan\\u0000 Turing"},{"id":126,"name":"Kept"}]';
    await fx.writeBody(jobs, body, runId);
    const { rows: before } = await sql<{ text: string }>`
      select raw #>> '{}' as text from public.rejected_records
      where jsonb_typeof(raw) = 'string' order by id`.execute(fx.db);
    expect(before.map((r) => r.text)).toEqual([
      expect.stringContaining('Ada'),
      expect.stringContaining('Grace'),
      expect.stringContaining('Alan'),
    ]);

    const erased = await eraseRecords(fx.db, {
      account: 'default',
      resource: jobs,
      waitMs: 1000,
      ids: ['123', '124'],
      origin: 'command',
      note: null,
    });
    expect(erased.map((e) => [e.id, e.rejectedRecords])).toEqual([
      ['123', 1],
      ['124', 1],
    ]);
    const { rows: after } = await sql<{ text: string }>`
      select coalesce(raw #>> '{}', raw::text) as text from public.rejected_records order by id`.execute(
      fx.db,
    );
    const left = after.map((r) => r.text).join('\n');
    expect(left).not.toContain('Ada');
    expect(left).not.toContain('Grace');
    expect(left).toContain('Alan');
  });
});
