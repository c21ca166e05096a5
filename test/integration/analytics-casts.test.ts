import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { timestampUtc } from '../../src/warehouse/analytics/casts.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

/** Values the fast path must answer exactly as hiresync.try_timestamptz_utc does, or hand to it. */
const VALUES: unknown[] = [
  '2025-07-13T16:11:09.800Z',
  '2025-07-13 16:11:09Z',
  '2025-07-13T16:11:09.123456+05:30',
  '2025-07-13T16:11:09.1234567Z',
  '2025-07-13T16:11:09-0800',
  '2025-07-13T16:11:09+14',
  '2025-07-13T16:11:09+15:00',
  '2025-07-13T16:11:09+16:00',
  '2025-07-13T16:11:09',
  '2025-07-13',
  '2024-02-29T10:00:00Z',
  '2023-02-29T10:00:00Z',
  '2023-02-28T10:00:00Z',
  '2023-04-31T10:00:00Z',
  '2023-13-01T10:00:00Z',
  '2023-01-01T24:00:00Z',
  '2023-01-01T23:59:60Z',
  '2023-01-01T23:60:00Z',
  '0000-01-01T00:00:00Z',
  '0999-01-01T00:00:00Z',
  '2023-01-01T10:00:00 EST',
  '2023-01-01t10:00:00z',
  '01/02/2023 10:00',
  'soon',
  '',
  12345,
  1.5,
  1e30,
  true,
  null,
  { at: '2023-01-01T10:00:00Z' },
  ['2023-01-01T10:00:00Z'],
];

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase(inject('databaseUrl'));
});
afterAll(async () => {
  await t?.drop();
});

describe('the fast timestamp cast of the analytics views', () => {
  it('answers exactly as try_timestamptz_utc for every value, under any TimeZone and DateStyle, and never raises', async () => {
    const values = JSON.stringify(VALUES.map((v) => ({ v })));
    for (const [zone, style] of [
      ['UTC', 'ISO, YMD'],
      ['Asia/Tokyo', 'SQL, DMY'],
      ['America/New_York', 'German, MDY'],
    ] as const) {
      const rows = await t.db.transaction().execute(async (trx) => {
        await sql`select set_config('timezone', ${zone}, true), set_config('datestyle', ${style}, true)`.execute(
          trx,
        );
        const { rows } = await sql<{ v: unknown; fast: string | null; slow: string | null }>`
          select x.v, (${sql.raw(timestampUtc('x.v'))})::text as fast,
            hiresync.try_timestamptz_utc(x.v)::text as slow
          from jsonb_to_recordset(${values}::jsonb) as x(v jsonb)`.execute(trx);
        return rows;
      });
      expect(rows).toHaveLength(VALUES.length);
      for (const row of rows) expect([zone, row.v, row.fast]).toEqual([zone, row.v, row.slow]);
    }
  });
});
