import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { schemaOf } from '../../src/account-name.js';
import { Secret } from '../../src/secret.js';
import type { Database } from '../../src/warehouse/tables.js';
import { secretOf } from '../support/accounts-harness.js';
import { cleanupAfterEach } from '../support/lifecycle.js';
import { runCli, UNREACHABLE_URL } from '../support/run-cli.js';

const { harness, accounts } = cleanupAfterEach();

/** The rows of the summary `sync` printed (after its header and rule), split into cells. */
function summaryRows(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .slice(2)
    .map((line) => line.split(/\s{2,}/));
}

/** The JSON log lines of a CLI's stderr. */
function logLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** How many runs a schema's sync_runs holds. */
async function runsIn(db: Kysely<Database>, schema: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from ${sql.table(`${schema}.sync_runs`)}`.execute(db);
  return Number(rows[0]?.n);
}

describe('hiresync sync when a token service cannot be reached', () => {
  it('starts no run, tells each resource at once why, and exits 1', async () => {
    const h = await harness({ simulator: { dataset: { counts: { jobs: 5 } } } });
    const result = await runCli(['sync'], {
      ...h.env,
      HIRESYNC_RESOURCES: 'jobs,job_posts,tracking_links',
      HIRESYNC_AUTH_URL: UNREACHABLE_URL,
      HIRESYNC_MAX_RETRIES: '1',
    });
    expect(result.code, result.stderr).toBe(1);
    const rows = summaryRows(result.stdout);
    expect(rows.map(([resource]) => resource)).toEqual(['jobs', 'job_posts', 'tracking_links']);
    for (const row of rows) {
      expect(row.at(-1)).toMatch(
        /^failed: not started: POST \/\S+ failed 2 times \(ECONNREFUSED\); http:\/\/127\.0\.0\.1:9 is unreachable: check HIRESYNC_AUTH_URL and the network$/,
      );
    }
    // No run was recorded, and the API was never asked for a list.
    expect(await runsIn(h.database.db, 'public')).toBe(0);
    expect(h.sim.stats.listRequests).toBe(0);
    const warnings = logLines(result.stderr).filter((l) => l.component === 'sync');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      account: 'default',
      err: { message: expect.stringContaining('http://127.0.0.1:9 is unreachable') },
    });
  }, 60_000);

  it('runs the account whose token service answers beside one whose does not, with one token request for it', async () => {
    const h = await accounts({
      accounts: ['acme'],
      records: 5,
      env: { HIRESYNC_RESOURCES: 'jobs,job_posts', HIRESYNC_MAX_RETRIES: '1' },
    });
    // acme's auth URL is a closed port; default's token service is the simulator.
    await h.store.remove('acme');
    await h.store.add({
      name: 'acme',
      baseUrl: h.sim.url,
      auth: {
        mode: 'client_credentials',
        authUrl: UNREACHABLE_URL,
        clientId: 'acme-client',
        clientSecret: new Secret(secretOf('acme')),
      },
    });
    const result = await runCli(['sync'], h.env);
    expect(result.code, result.stderr).toBe(1);
    const outcomes = summaryRows(result.stdout).map((row) => [row[0], row[1], row.at(-1)]);
    expect(outcomes).toEqual([
      ['default', 'jobs', 'succeeded'],
      ['default', 'job_posts', 'succeeded'],
      [
        'acme',
        'jobs',
        expect.stringMatching(/^failed: not started: .*http:\/\/127\.0\.0\.1:9 is unreachable/),
      ],
      [
        'acme',
        'job_posts',
        expect.stringMatching(/^failed: not started: .*http:\/\/127\.0\.0\.1:9 is unreachable/),
      ],
    ]);
    expect(await h.liveIds('default', 'jobs')).toEqual(h.expectedIds('default', 'jobs'));
    // A normal account's runs cost one token request, as before the check.
    expect(h.sim.statsOf('default').tokensIssued).toBe(1);
    expect(h.sim.statsOf('acme')).toMatchObject({ listRequests: 0, tokensIssued: 0 });
    expect(await runsIn(h.database.db, schemaOf('acme'))).toBe(0);
    expect(await runsIn(h.database.db, 'public')).toBe(2);
    const warnings = logLines(result.stderr).filter((l) => l.component === 'sync');
    expect(warnings.map((w) => w.account)).toEqual(['acme']);
  }, 60_000);
});
