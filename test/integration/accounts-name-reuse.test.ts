import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { AccountStore } from '../../src/accounts/account-store.js';
import { storedRowsOf } from '../../src/warehouse/layout/stored-rows.js';
import { runAccounts } from '../support/accounts-cli.js';
import {
  type AccountsHarness,
  secretOf,
  startAccountsHarness,
  targetsOf,
} from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { PARTNER_APP_ENV } from '../support/test-env.js';

const { defer } = cleanupAfterEach();

/** A simulator serving acme and beta, and a database where both are registered and have synced their jobs. */
async function syncedAcme(): Promise<AccountsHarness> {
  const h = await startAccountsHarness({ accounts: ['acme', 'beta'], withoutDefault: true });
  defer(() => h.close());
  const outcomes = await h.sync(targetsOf(['acme', 'beta'], ['jobs']));
  expect(outcomes.filter((o) => !o.ok)).toEqual([]);
  expect(await h.liveIds('acme', 'jobs')).toHaveLength(h.expectedIds('acme', 'jobs').length);
  return h;
}

function accounts(h: AccountsHarness, argv: string[], input = '') {
  return runAccounts(h.env, argv, input);
}

/** `accounts add acme` with the simulator's credentials for acme, untested. */
function addAcme(h: AccountsHarness, ...flags: string[]) {
  return accounts(
    h,
    ['add', 'acme', '--no-test', '--client-id', 'acme-client', ...flags],
    `${secretOf('acme')}\n`,
  );
}

/** What acme's views show, and whether its schema and registration exist. */
async function acmeSeen(h: AccountsHarness) {
  const { db } = h.database;
  const { rows: schema } = await sql`select 1 from pg_namespace where nspname = 'acme'`.execute(db);
  const jobs =
    schema.length === 0
      ? undefined
      : Number(
          (await sql<{ n: string }>`select count(*) as n from acme.jobs`.execute(db)).rows[0]?.n,
        );
  const { rows: union } = await sql<{ n: string }>`
    select count(*) as n from all_accounts.jobs where account = 'acme'`.execute(db);
  return {
    registered: (await new AccountStore(db).get('acme')) !== undefined,
    schema: schema.length === 1,
    jobs,
    inAllAccounts: Number(union[0]?.n),
  };
}

/** The refusal `accounts add acme` prints for `jobs` jobs (their versions, the typed view's 5 columns and one run) stored. */
function refusal(jobs: number, retry: string): string {
  return `hiresync accounts add: acme: ${jobs} jobs, ${jobs} jobs_history, 1 sync_runs stored from an earlier registration (removed without --drop-data); nothing was registered. If it is the same customer back, ${retry} with --reuse-data to show them its data again; if not, drop them first with 'hiresync accounts remove acme --drop-data'\n`;
}

describe('a name registered again after accounts remove without --drop-data', () => {
  it('refuses plain add (and authorize) with exit 1 naming the rows per table, registering nothing; --reuse-data shows them again', async () => {
    const h = await syncedAcme();
    const jobs = h.expectedIds('acme', 'jobs').length;
    expect((await accounts(h, ['remove', 'acme'])).code).toBe(0);
    // Its schema stays, readable there, out of the all_accounts views.
    const before = await acmeSeen(h);
    expect(before).toEqual({ registered: false, schema: true, jobs, inAllAccounts: 0 });

    const refused = await addAcme(h);
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: refusal(jobs, "run 'hiresync accounts add acme ...' again"),
    });
    expect(await acmeSeen(h)).toEqual(before);
    // accounts authorize registers through the same check: refused before any URL is printed.
    const authorize = await runAccounts({ ...h.env, ...PARTNER_APP_ENV }, [
      'authorize',
      'acme',
      '--port',
      '0',
      '--timeout',
      '2s',
    ]);
    expect(authorize).toEqual({
      code: 1,
      stdout: '',
      stderr: refusal(jobs, "run 'hiresync accounts authorize acme' again").replace(
        'hiresync accounts add:',
        'hiresync accounts authorize:',
      ),
    });
    expect(await acmeSeen(h)).toEqual(before);

    const reused = await addAcme(h, '--reuse-data');
    expect(reused).toMatchObject({ code: 0, stderr: '' });
    expect(await acmeSeen(h)).toEqual({
      registered: true,
      schema: true,
      jobs,
      inAllAccounts: jobs,
    });
  });

  it('creates no schema when refusing a name whose schema is gone but whose rows are stored', async () => {
    const h = await syncedAcme();
    expect((await accounts(h, ['remove', 'acme'])).code).toBe(0);
    await sql`drop schema acme cascade`.execute(h.database.db);
    const refused = await addAcme(h);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('stored from an earlier registration');
    expect(await acmeSeen(h)).toEqual({
      registered: false,
      schema: false,
      jobs: undefined,
      inAllAccounts: 0,
    });
  });

  it('remove --drop-data of the unregistered name drops its rows and schema; plain add then starts empty', async () => {
    const h = await syncedAcme();
    const jobs = h.expectedIds('acme', 'jobs').length;
    expect((await accounts(h, ['remove', 'acme'])).code).toBe(0);

    // Without --drop-data: not registered, and what is stored is named.
    expect(await accounts(h, ['remove', 'acme'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `hiresync accounts remove: no account acme is registered; acme: ${jobs} jobs, ${jobs} jobs_history, 1 sync_runs stored from an earlier registration: 'hiresync accounts remove acme --drop-data' drops them\n`,
    });
    // Without a terminal and without --yes: exit 2, nothing dropped.
    const unconfirmed = await accounts(h, ['remove', 'acme', '--drop-data']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('confirm with --yes');
    expect(await storedRowsOf(h.database.db, 'acme')).not.toEqual([]);

    expect(await accounts(h, ['remove', 'acme', '--drop-data', '--yes'])).toEqual({
      code: 0,
      stdout: `dropped schema acme and ${jobs} jobs, ${jobs} jobs_history, 1 sync_runs stored from an earlier registration of acme (no account acme is registered); 'hiresync accounts add acme' now starts it empty\n`,
      stderr: '',
    });
    expect(await storedRowsOf(h.database.db, 'acme')).toEqual([]);
    expect(await acmeSeen(h)).toMatchObject({ registered: false, schema: false });
    // Nothing left: a second drop has nothing to drop.
    expect((await accounts(h, ['remove', 'acme', '--drop-data', '--yes'])).code).toBe(1);

    // Another account's rows are neither dropped nor counted.
    expect(await h.liveIds('beta', 'jobs')).toHaveLength(h.expectedIds('beta', 'jobs').length);
    expect(await addAcme(h)).toMatchObject({ code: 0, stderr: '' });
    expect(await acmeSeen(h)).toEqual({
      registered: true,
      schema: true,
      jobs: 0,
      inAllAccounts: 0,
    });
  });
});
