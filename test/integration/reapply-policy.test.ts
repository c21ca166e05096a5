// hiresync reapply-policy: what was stored before HIRESYNC_FIELD_POLICY
// changed — rows, every history version, rejected records, the reference
// tables and their columns — is rewritten to match it: no dropped or hashed
// plaintext left (a pg_dump searched for the values), numbers digit for digit,
// resumable after a crash, idempotent (a rerun writes nothing), one account
// at a time, and a later run under the same policy finds nothing changed.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createApp, withResolvedPolicy } from '../../src/app.js';
import { registryOf } from '../../src/commands/account-options.js';
import { loadConfig } from '../../src/config/load-config.js';
import { main } from '../../src/main.js';
import { FieldHasher } from '../../src/privacy/field-hasher.js';
import { runOnce } from '../../src/queue/run-once.js';
import { RESOURCE_NAMES } from '../../src/resources/index.js';
import { defineListResource } from '../../src/resources/json-resource.js';
import type { Dataset } from '../../src/simulator/dataset.js';
import type { Database } from '../../src/warehouse/tables.js';
import { reapplyResource } from '../../src/warehouse/upkeep/policy-reapply.js';
import { type AccountsHarness, secretOf, targetsOf } from '../support/accounts-harness.js';
import { captureIo } from '../support/capture-io.js';
import { cleanupAfterEach, waitFor } from '../support/lifecycle.js';

const { accounts } = cleanupAfterEach();

const HASH_KEY = Buffer.alloc(32, 42);
const hash = new FieldHasher(HASH_KEY).hash;
const POLICY =
  'candidates.emails.value=hash,candidates.phone_numbers=drop,candidates.last_name=drop,referrers.name=hash';
const RESOURCES = ['tracking_links', 'referrers', 'candidates'];
/** An id beyond 2^53, and a numeric whose digits JavaScript would not print back. */
const BIG_ID = '9007199254740993';

function policyEnv(h: AccountsHarness, policy = POLICY): Record<string, string> {
  return { ...h.env, HIRESYNC_FIELD_POLICY: policy, HIRESYNC_HASH_KEY: HASH_KEY.toString('hex') };
}

async function reapply(args: string[], env: Record<string, string>) {
  const io = captureIo();
  const code = await main(['reapply-policy', ...args], env, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/** Every text of the database, schema and data, as pg_dump writes it. */
async function dump(url: string): Promise<string> {
  const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', url], {
    maxBuffer: 256 * 1024 ** 2,
  });
  return stdout;
}

/** Each row's key and xmin in one of the shared tables, for one account. */
async function xminsOf(db: Kysely<Database>, table: string, account: string): Promise<string[]> {
  const key = table.endsWith('_history') ? sql`id, valid_from` : sql`id`;
  const { rows } = await sql<{ k: string }>`
    select concat_ws(' ', ${key}, xmin) as k from ${sql.table(`hiresync.data_${table}`)}
    where account = ${account} order by ${key}`.execute(db);
  return rows.map((r) => r.k);
}

const TABLES = [
  'candidates_data',
  'candidates_history',
  'referrers',
  'referrers_history',
  'tracking_links',
  'tracking_links_history',
  'rejected_records',
];

async function xminsOfAccount(db: Kysely<Database>, account: string) {
  return Promise.all(TABLES.map((t) => xminsOf(db, t, account)));
}

async function countOf(db: Kysely<Database>, table: string, account: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from ${sql.table(`hiresync.data_${table}`)}
    where account = ${account} and id <> ${BIG_ID}::bigint`.execute(db);
  return rows[0]?.n ?? 0;
}

/** The plaintext the policy keeps out: emails, phone numbers, last names of every candidate served. */
function plaintextOf(ds: Dataset): string[] {
  return [...ds.presentIndexes('candidates')].flatMap((i) => {
    const r = ds.record('candidates', i) as {
      emails?: { value: string }[];
      phone_numbers?: { value: string }[];
      last_name?: string;
    };
    if (typeof r !== 'object' || r === null) return [];
    return [
      ...(r.emails ?? []).map((e) => e.value),
      ...(r.phone_numbers ?? []).map((p) => p.value),
    ];
  });
}

/** Default and acme served candidates, tracking links and referrers, some malformed or unstorable. */
async function startHarness() {
  const dataset = (seed: number, idOffset: number) => ({
    seed,
    idOffset,
    counts: { jobs: 0, job_posts: 0, tracking_links: 40, referrers: 20, candidates: 40 },
    malformedEvery: 9,
    nulEvery: 10,
  });
  return accounts({
    accounts: ['acme'],
    env: { HIRESYNC_RESOURCES: RESOURCES.join(','), HIRESYNC_PER_PAGE: '15' },
    simulator: {
      dataset: dataset(1, 0),
      accounts: [
        {
          name: 'acme',
          clientId: 'acme-client',
          clientSecrets: [secretOf('acme')],
          dataset: dataset(12, 1_000_000),
        },
      ],
    },
  });
}

/** A full sync of both accounts' resources with the harness's environment plus `env`. */
async function syncWith(h: AccountsHarness, env: Record<string, string>, accountNames: string[]) {
  const config = loadConfig(env, RESOURCE_NAMES);
  const app = createApp(config, h.log.logger, {
    defaultMetrics: false,
    registry: registryOf(config),
  });
  try {
    const outcomes = await runOnce(app, targetsOf(accountNames, RESOURCES), 'full');
    expect(outcomes.every((o) => o.ok)).toBe(true);
  } finally {
    await app.close();
  }
}

/** Stores what a policy-less deployment would: two full runs, records changed between them. */
async function storeWithoutPolicy(h: AccountsHarness): Promise<void> {
  await h.sync(targetsOf(['default', 'acme'], RESOURCES), 'full');
  for (const account of ['default', 'acme']) {
    const ds = h.sim.datasetOf(account);
    for (let i = 0; i < 8; i += 1) ds.touch('candidates', i);
    for (let i = 0; i < 4; i += 1) ds.touch('referrers', i);
  }
  await h.sync(targetsOf(['default', 'acme'], RESOURCES), 'full');
  // A record no run serves: an id beyond 2^53 and a numeric, with a version.
  const record = `{"id": ${BIG_ID}, "pay": 1.50, "last_name": "Exactly", "emails": [{"value": "big@example.com"}]}`;
  await sql`insert into public.candidates_data (id, data) values (${BIG_ID}::bigint, ${record}::jsonb)`.execute(
    h.database.db,
  );
  await sql`insert into public.candidates_history (id, valid_from, data)
    values (${BIG_ID}::bigint, now(), ${record}::jsonb)`.execute(h.database.db);
}

/** The policy of `env` as reapply-policy applies it (resolved against the resources). */
function resolvedPolicy(env: Record<string, string>) {
  const policy = withResolvedPolicy(loadConfig(env, RESOURCE_NAMES)).fieldPolicy;
  if (!policy) throw new Error('no policy');
  return policy;
}

describe('hiresync reapply-policy', () => {
  it('rewrites rows, history and rejected records of every account to the policy, resumes after a crash, and a rerun or a later run under it writes nothing', async () => {
    const h = await startHarness();
    const db = h.database.db;
    await storeWithoutPolicy(h);
    expect(await countOf(db, 'candidates_history', 'default')).toBeGreaterThan(
      await countOf(db, 'candidates_data', 'default'),
    );
    const env = policyEnv(h);
    const acmeBefore = await xminsOfAccount(db, 'acme');

    // A crash after two batches of default's candidates: the batches done stay done.
    const candidates = defineListResource('candidates');
    const crash = new Error('crash');
    await expect(
      reapplyResource(
        db,
        { account: 'default', schema: 'public', resource: candidates },
        resolvedPolicy(env),
        {
          batchSize: 7,
          rowWaitMs: 5000,
          onBatch: (_, p) => {
            if (p.read >= 14) throw crash;
          },
        },
      ),
    ).rejects.toBe(crash);
    const { rows: stopped } = await sql<{ rows_read: string; done: boolean }>`
      select rows_read::text, completed_at is not null as done from hiresync.policy_reapply
      where account = 'default' and relation = 'candidates_data'`.execute(db);
    expect(stopped).toEqual([{ rows_read: '14', done: false }]);

    const first = await reapply(['--account', 'default', '--batch', '7'], env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(
      'default/candidates/candidates_data: continuing a pass stopped after 14 rows read (same policy)',
    );
    expect(first.stdout).toMatch(
      /default\/referrers\/referrers_history: \d+ rows read, [1-9]\d* rewritten/,
    );
    expect(first.stdout).toMatch(
      /default\/tracking_links\/tracking_links: \d+ rows read, [1-9]\d* rewritten/,
    );
    expect(first.stdout).not.toContain('acme/');
    // Another account is left alone: not a row of it written.
    expect(await xminsOfAccount(db, 'acme')).toEqual(acmeBefore);

    const all = await reapply([], env);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain('default/candidates/candidates_data: already applied');
    expect(all.stdout).toMatch(
      /acme\/candidates\/rejected_records: \d+ rows read, [1-9]\d* rewritten/,
    );

    // Numbers digit for digit; the values hashed as a run hashes them.
    const { rows: big } = await sql<{ data: string }>`
      select data::text as data from public.candidates_data where id = ${BIG_ID}::bigint`.execute(
      db,
    );
    expect(big[0]?.data).toBe(
      `{"id": ${BIG_ID}, "pay": 1.50, "emails": [{"value": "${hash('big@example.com')}"}]}`,
    );
    const names = await sql<{ name: string | null; raw: string }>`
      select name, raw ->> 'name' as raw from hiresync.data_referrers where raw ? 'name'`.execute(
      db,
    );
    expect(names.rows.length).toBeGreaterThan(20);
    for (const { name, raw } of names.rows) {
      expect(name).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
      expect(raw).toBe(name);
    }
    const text = await dump(h.database.url);
    for (const account of ['default', 'acme']) {
      const values = plaintextOf(h.sim.datasetOf(account));
      expect(values.length).toBeGreaterThan(40);
      for (const value of values) expect(text).not.toContain(value);
      expect(text).toContain(hash(values[0] as string));
    }
    for (const value of ['big@example.com', 'Exactly', 'Lovelace', 'Hopper', 'Turing']) {
      expect(text).not.toContain(value);
    }
    expect(text).not.toMatch(/Referrer \d/);

    // A rerun: every relation already applied, not a row written.
    const before = await Promise.all(['default', 'acme'].map((a) => xminsOfAccount(db, a)));
    const again = await reapply([], env);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toMatch(/rows read, \d+ rewritten\n/);
    expect(again.stdout.match(/: already applied/g)?.length).toBe(2 * 3 * 3);
    expect(await Promise.all(['default', 'acme'].map((a) => xminsOfAccount(db, a)))).toEqual(
      before,
    );

    // A later full run under the same policy finds every record as stored: no new version.
    // (A referrer's row holds its list's copy or a link's, whichever came last: not compared.)
    const histories = ['candidates_history', 'tracking_links_history'];
    const versions = await Promise.all(histories.map((t) => countOf(db, t, 'default')));
    await syncWith(h, env, ['default']);
    expect(await Promise.all(histories.map((t) => countOf(db, t, 'default')))).toEqual(versions);

    // Another policy starts the relations of the resources it changes over. The typed
    // view shows a hashed boolean (its column widened to text); a dropped key's column stays, null.
    const changed = await reapply(['--resource', 'candidates'], {
      ...env,
      HIRESYNC_FIELD_POLICY: `${POLICY},candidates.title=drop,candidates.can_email=hash`,
    });
    expect(changed.code).toBe(0);
    expect(changed.stdout).toMatch(
      /default\/candidates\/candidates_data: \d+ rows read, [1-9]\d* rewritten/,
    );
    expect(changed.stdout).not.toContain('referrers');
    const { rows: flat } = await sql<{ can_email: string | null; title: string | null }>`
      select can_email::text as can_email, title from public.candidates_flat`.execute(db);
    expect(flat.length).toBeGreaterThan(30);
    expect(flat.map((r) => r.can_email)).toContain(hash('true'));
    expect(flat.filter((r) => r.title !== null)).toEqual([]);
  });

  it('rewrites again what a run under the old policy wrote during the pass, and leaves the relation to a rerun', async () => {
    const h = await startHarness();
    await storeWithoutPolicy(h);
    const env = policyEnv(h);
    let synced = false;
    const reports = await reapplyResource(
      h.database.db,
      { account: 'default', schema: 'public', resource: defineListResource('candidates') },
      resolvedPolicy(env),
      {
        batchSize: 10,
        rowWaitMs: 5000,
        onBatch: async () => {
          if (synced) return;
          synced = true;
          // A worker not restarted: its full run stores every record as served again.
          h.sim.datasetOf('default').touch('candidates', 0);
          await syncWith(h, h.env, ['default']);
        },
      },
    );
    const table = reports.find((r) => r.relation === 'candidates_data');
    expect(table?.late).toBeGreaterThan(0);
    // Left incomplete: the next run checks what was written since the pass began, once more.
    const next = await reapply(['--account', 'default', '--resource', 'candidates'], env);
    expect(next.code).toBe(0);
    expect(next.stdout).toContain('default/candidates/candidates_data: continuing a pass stopped');
    // Nothing of default's candidates holds an email address or a phone number.
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from (
        select data::text as t from hiresync.data_candidates_data where account = 'default'
        union all
        select data::text from hiresync.data_candidates_history where account = 'default'
        union all
        select raw::text from hiresync.data_rejected_records
        where account = 'default' and resource = 'candidates'
      ) s where t like '%@%' or t like '%phone_numbers%'`.execute(h.database.db);
    expect(rows[0]?.n).toBe(0);
  });

  it('waits for a row a page holds, one row at a time, after rewriting the rest; rewrites what an old worker wrote meanwhile and exits 1 saying to restart it', async () => {
    const h = await startHarness();
    await storeWithoutPolicy(h);
    const db = h.database.db;
    const ds = h.sim.datasetOf('default');
    const held = String(ds.idOf('candidates', 3));
    const email = (ds.record('candidates', 3) as { emails: { value: string }[] }).emails[0]?.value;
    const other = String(ds.idOf('candidates', 4));
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holding = db.transaction().execute(async (trx) => {
      await sql`select id from hiresync.data_candidates_data
        where account = 'default' and id = ${held}::bigint for update`.execute(trx);
      await released;
    });
    const run = reapply(['--account', 'default', '--resource', 'candidates'], policyEnv(h));
    const waiting = await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where application_name = 'hiresync reapply-policy' and wait_event_type = 'Lock'`.execute(
        db,
      );
      return (rows[0]?.n ?? 0) > 0;
    });
    expect(waiting).toBe(true);
    // The rest of its batch is written already (committed), the held row not yet.
    const { rows } = await sql<{ id: string; email: string }>`
      select id::text, data -> 'emails' -> 0 ->> 'value' as email from hiresync.data_candidates_data
      where account = 'default' and id in (${held}::bigint, ${other}::bigint)`.execute(db);
    expect(rows.find((r) => r.id === held)?.email).toBe(email);
    expect(rows.find((r) => r.id === other)?.email).toMatch(/^hmac-sha256:/);
    // Meanwhile a worker still on the old policy writes a record the pass has done, as served.
    await sql`update hiresync.data_candidates_data
      set data = jsonb_set(data, '{emails,0,value}', to_jsonb('late@example.com'::text)),
        changed_at = statement_timestamp()
      where account = 'default' and id = ${other}::bigint`.execute(db);
    release();
    await holding;
    const result = await run;
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /candidates_data: \d+ rows read, \d+ rewritten; 1 row written meanwhile by a run under another policy, rewritten\n/,
    );
    expect(result.stderr).toContain(
      'restart every worker with this policy, then run reapply-policy again',
    );
    const { rows: after } = await sql<{ id: string; email: string }>`
      select id::text, data -> 'emails' -> 0 ->> 'value' as email from hiresync.data_candidates_data
      where account = 'default' and id in (${held}::bigint, ${other}::bigint)`.execute(db);
    expect(after.find((r) => r.id === held)?.email).toBe(hash(email as string));
    expect(after.find((r) => r.id === other)?.email).toBe(hash('late@example.com'));
    // Run again once the workers are restarted: only what was written since is looked at again.
    const again = await reapply(['--account', 'default', '--resource', 'candidates'], policyEnv(h));
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('default/candidates/candidates_data: continuing a pass');
  });
});

describe('hiresync reapply-policy refuses before connecting', () => {
  const unreachable = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };

  it.each([
    [
      'a policy item it cannot read',
      { HIRESYNC_FIELD_POLICY: 'candidates.emails=blur' },
      'use drop or hash',
    ],
    [
      'a resource no resource can be',
      { HIRESYNC_FIELD_POLICY: 'Candidates.emails=drop' },
      'which no resource can be',
    ],
    [
      'a policy that hashes without HIRESYNC_HASH_KEY',
      { HIRESYNC_FIELD_POLICY: 'candidates.emails=hash' },
      'HIRESYNC_HASH_KEY: is required',
    ],
    [
      'a hash of a typed key',
      {
        HIRESYNC_FIELD_POLICY: 'tracking_links.created_at=hash',
        HIRESYNC_HASH_KEY: HASH_KEY.toString('hex'),
      },
      'drop it instead',
    ],
  ])('exits 2 on %s', async (_, env, message) => {
    const result = await reapply([], { ...unreachable, ...env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('exits 2 on a name that cannot be an account, and 0 with nothing to do', async () => {
    const env = { ...unreachable, HIRESYNC_FIELD_POLICY: 'candidates.phone=drop' };
    expect((await reapply(['--account', 'Not A Name'], env)).code).toBe(2);
    expect((await reapply(['--batch', '0'], env)).code).toBe(2);
    const none = await reapply(['--resource', 'jobs'], env);
    expect(none).toMatchObject({ code: 0, stderr: '' });
    expect(none.stdout).toContain('HIRESYNC_FIELD_POLICY has no rule for jobs: nothing to reapply');
    const unset = await reapply([], unreachable);
    expect(unset).toMatchObject({
      code: 0,
      stdout: 'HIRESYNC_FIELD_POLICY is not set: nothing to reapply\n',
    });
  });

  it('exits 2, once connected, for an account the database holds nothing of', async () => {
    const h = await startHarness();
    const result = await reapply(['--account', 'nobody'], policyEnv(h));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('account nobody has no data in this database');
  });
});
