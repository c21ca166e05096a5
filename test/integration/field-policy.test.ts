import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { FieldHasher } from '../../src/privacy/field-hasher.js';
import { WITHHELD } from '../../src/privacy/field-policy.js';
import type { Dataset } from '../../src/simulator/dataset.js';
import { type SyncHarness, startSyncHarness } from '../support/sync-harness.js';

const HASH_KEY = Buffer.alloc(32, 42);
const hash = new FieldHasher(HASH_KEY).hash;

const harnesses: SyncHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

/** Every text of the database, schema and data, as pg_dump writes it. */
async function dump(url: string): Promise<string> {
  const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', url], {
    maxBuffer: 256 * 1024 ** 2,
  });
  return stdout;
}

interface Person {
  emails: string[];
  phones: string[];
}

function candidatesOf(ds: Dataset): Person[] {
  return [...ds.presentIndexes('candidates')].map((i) => {
    const r = ds.record('candidates', i) as {
      emails?: { value: string }[];
      phone_numbers?: { value: string }[];
    };
    return {
      emails: (r.emails ?? []).map((e) => e.value),
      phones: (r.phone_numbers ?? []).map((p) => p.value),
    };
  });
}

describe('HIRESYNC_FIELD_POLICY', () => {
  it('lets no dropped or hashed value reach Postgres: rows, history, rejected records, reference tables, typed views', async () => {
    const t = await startSyncHarness({
      simulator: {
        dataset: {
          counts: { candidates: 60, tracking_links: 80, referrers: 20 },
          malformedEvery: 9,
        },
      },
      env: {
        HIRESYNC_PER_PAGE: '25',
        HIRESYNC_RESOURCES: 'tracking_links,referrers,candidates',
        HIRESYNC_FIELD_POLICY:
          'candidates.emails.value=hash,candidates.phone_numbers=drop,candidates.last_name=drop,referrers.name=hash',
        HIRESYNC_HASH_KEY: HASH_KEY.toString('hex'),
      },
    });
    harnesses.push(t);
    const ds = t.sim.dataset;
    const resources = ['tracking_links', 'referrers', 'candidates'];
    expect((await t.sync(resources)).every((o) => o.ok)).toBe(true);
    // Changes, so that history holds more than one version of each.
    for (let i = 0; i < 10; i += 1) ds.touch('candidates', i);
    for (let i = 0; i < 5; i += 1) ds.touch('referrers', i);
    ds.remove('candidates', 12);
    expect((await t.sync(resources, 'full')).every((o) => o.ok)).toBe(true);

    const text = await dump(t.database.url);
    const people = candidatesOf(ds);
    expect(people.flatMap((p) => p.emails).length).toBeGreaterThan(60);
    for (const person of people) {
      for (const value of [...person.emails, ...person.phones]) expect(text).not.toContain(value);
    }
    expect(text).not.toContain('last_name');
    expect(text).not.toContain('phone_numbers');
    expect(text).not.toMatch(/Referrer \d/);
    // What is stored instead: the hash, the same wherever the value is.
    const email = people[0]?.emails[0] as string;
    expect(text).toContain(hash(email));
    const { rows: history } = await sql<{ n: string }>`
      select count(*) as n from public.candidates_history
      where data -> 'emails' -> 0 ->> 'value' = ${hash(email)}`.execute(t.database.db);
    expect(Number(history[0]?.n)).toBeGreaterThan(0);
    // An analyst holding the key reproduces a hash in Postgres (pgcrypto), as the README shows.
    // (In public, as an analyst's session would find it; hiresync's own connections search pg_catalog only.)
    await sql`create extension if not exists pgcrypto schema public`.execute(t.database.db);
    const { rows: reproduced } = await sql<{ h: string }>`
      select 'hmac-sha256:' || encode(public.hmac(convert_to(${email}, 'UTF8'), decode(${HASH_KEY.toString('base64')}, 'base64'), 'sha256'), 'hex') as h`.execute(
      t.database.db,
    );
    expect(reproduced[0]?.h).toBe(hash(email));
    const { rows: names } = await sql<{ name: string | null }>`
      select name from public.referrers where name is not null`.execute(t.database.db);
    expect(names.length).toBeGreaterThan(0);
    for (const { name } of names) expect(name).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    // A rejected candidate that is not even an object is kept, withheld.
    const { rows: rejected } = await sql<{ raw: unknown }>`
      select raw from public.rejected_records where resource = 'candidates'`.execute(t.database.db);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.map((r) => r.raw)).toContain(WITHHELD);
  });
});
