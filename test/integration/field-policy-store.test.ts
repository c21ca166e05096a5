import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { recordPolicyOf } from '../../src/config/load-config.js';
import { FieldHasher } from '../../src/privacy/field-hasher.js';
import { BUILT_IN_RESOURCES } from '../../src/resources/index.js';
import type { Page } from '../../src/sync/ports.js';
import { KyselyRunStore } from '../../src/warehouse/runs/run-store.js';
import { createRun } from '../../src/warehouse/runs/sync-runs.js';
import { useEmptyWarehouse } from '../support/warehouse-fixture.js';

const fx = useEmptyWarehouse();
const KEY = Buffer.alloc(32, 3);
const hash = new FieldHasher(KEY).hash;

function storeWith(policy: string): KyselyRunStore {
  const { fieldPolicy, problems } = recordPolicyOf({
    HIRESYNC_FIELD_POLICY: policy,
    HIRESYNC_HASH_KEY: KEY.toString('hex'),
  });
  expect(problems).toEqual([]);
  return new KyselyRunStore(fx.db, { resources: BUILT_IN_RESOURCES, fieldPolicy });
}

function pageOf(body: string): Page {
  return {
    number: 1,
    url: 'https://api.test/v3/jobs',
    body,
    records: JSON.parse(body),
    nextUrl: undefined,
  };
}

describe('the page write under a field policy', () => {
  it('stores a rejected record with the policy applied to whatever of it can be read, and its reason', async () => {
    const store = storeWith('jobs.owner.email=hash,jobs.notes=drop');
    const runId = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
    const body =
      '[{"id":"x1","owner":{"email":"ada@example.com"},"notes":"private"},{"id":12345678901234567890,"owner":{"email":"grace@example.com"},"notes":"n"},{"id":7,"owner":{"email":"alan@example.com"},"notes":"n","score":1.50}]';
    const result = await store.writePage('jobs', runId, pageOf(body));
    expect(result.written).toBe(1);
    const { rows: rejected } = await sql<{ raw: string; reason: string }>`
      select raw::text as raw, reason from public.rejected_records order by page, record_key`.execute(
      fx.db,
    );
    expect(rejected).toEqual(
      expect.arrayContaining([
        {
          raw: `{"id": "x1", "owner": {"email": "${hash('ada@example.com')}"}}`,
          reason: expect.stringContaining('id'),
        },
        {
          // The id beyond bigint, digit for digit: rejected by Postgres, never rounded.
          raw: `{"id": 12345678901234567890, "owner": {"email": "${hash('grace@example.com')}"}}`,
          reason: expect.any(String),
        },
      ]),
    );
    // The stored row: numbers as sent (Postgres read 1.50 from the body's text), nothing dropped left.
    const { rows } = await sql<{
      data: string;
    }>`select data::text as data from public.jobs`.execute(fx.db);
    expect(rows).toEqual([
      { data: `{"id": 7, "owner": {"email": "${hash('alan@example.com')}"}, "score": 1.50}` },
    ]);
  });

  it('uses the page it prepared while the one before it was written, and polices a page it did not prepare', async () => {
    const store = storeWith('jobs.notes=drop');
    const runId = await createRun(fx.db, 'default', { resource: 'jobs', mode: 'full' });
    const first = pageOf('[{"id":1,"notes":"a"}]');
    const prepared = store.preparePage('jobs', first);
    await store.writePage('jobs', runId, first, prepared);
    // A verdict made of another page is never used for this one.
    const second = { ...pageOf('[{"id":2,"notes":"b"}]'), number: 2 };
    await store.writePage('jobs', runId, second, prepared);
    const { rows } = await sql<{ data: unknown }>`select data from public.jobs order by id`.execute(
      fx.db,
    );
    expect(rows).toEqual([{ data: { id: 1 } }, { data: { id: 2 } }]);
  });
});
