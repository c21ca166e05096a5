import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { adminQuery, TEST_DATABASE_PREFIX } from '../support/databases.js';
import { runCli } from '../support/run-cli.js';

// A database of the test's own name: the demo's hiresync_demo may be someone's on a shared server.
const database = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString('hex')}`;
afterAll(() =>
  adminQuery(inject('databaseUrl'), [`drop database if exists ${database} with (force)`]),
);

describe('npm run demo', () => {
  it('syncs every resource of three accounts (one a partner account connected through the authorization code grant) and prints the summary and non-empty analyst queries, one across every account', async () => {
    const result = await runCli(['demo', '--records', '600', '--database', database], {
      DATABASE_URL: inject('databaseUrl'),
      REDIS_URL: inject('redisUrl'),
    });
    expect(result.code).toBe(0);
    // Pages per account: job_posts takes one more, its extra walk of the
    // inactive posts v3 hides (HIRESYNC_EXTRA_WALKS=job_posts?active=false);
    // the reference lists fit a page each.
    // The v3 world sizes the jobs (a job for 15 applications), posts and links.
    const lists = {
      jobs: 1,
      job_posts: 2,
      tracking_links: 1,
      job_boards: 1,
      sources: 1,
      referrers: 1,
    };
    const pages: Record<string, Record<string, number>> = {
      default: lists,
      acme: lists,
      globex: lists,
    };
    for (const [account, resources] of Object.entries(pages)) {
      for (const [resource, count] of Object.entries(resources)) {
        expect(result.stdout).toMatch(
          new RegExp(
            `^${account}\\s+${resource}\\s+full\\s+${count}\\s+\\d+\\s+\\d+\\s+0\\s+[\\d.]+\\s+succeeded$`,
            'm',
          ),
        );
      }
    }
    // The v3 simulator sends tracking links flat: their names come from the
    // reference lists (a board's company and url token, a source's name).
    expect(result.stdout).toMatch(/^Company \d+\s+company\d+\s+\d+$/m);
    expect(result.stdout).toMatch(/^Source \d+\s+\d+$/m);
    expect(result.stdout).toMatch(/^Referrer \d+\s+\d+$/m);
    // How globex was connected, in one line; never a code or a token.
    const connected = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('globex is a partner account'));
    expect(connected).toHaveLength(1);
    expect(connected[0]).toMatch(
      /authorization code grant: 'hiresync accounts authorize globex --port 0'/,
    );
    expect(connected[0]).toMatch(/[1-9]\d* refresh(es)? \(each rotating the refresh token\)/);
    // Neither the authorize URL nor the callback's code is printed.
    expect(result.stdout).not.toMatch(/[?&](code|state)=/);
    const across = result.stdout.split('Every account at once')[1] ?? '';
    expect(across).toMatch(/^acme\s+[1-9]\d*\s+[1-9]\d*\s+[1-9]\d*$/m);
    expect(across).toMatch(/^default\s+[1-9]\d*\s+[1-9]\d*\s+[1-9]\d*$/m);
    expect(across).toMatch(/^globex\s+[1-9]\d*\s+[1-9]\d*\s+[1-9]\d*$/m);
    // The table: header, rule, then one row per account, up to the blank line.
    const table = across.split(/^-[- ]+$/m)[1]?.split('\n\n')[0] ?? '';
    expect(
      table
        .trim()
        .split('\n')
        .map((row) => row.split(/\s+/)[0]),
    ).toEqual(['acme', 'default', 'globex']);
    for (const title of ['Links per source', 'Links per referrer', 'Links per job board']) {
      const section = result.stdout.split(`${title}:`)[1] ?? '';
      // header, rule, then at least one row with a count
      expect(section).toMatch(/-----\n.+\s\d+\n/);
    }
    // History: the job changed twice has three versions, the dropped one a deletion version.
    const history = result.stdout.split('History: every version of job')[1]?.split('\n\n')[1] ?? '';
    const versions = history.split('\n').slice(2);
    expect(versions.map((row) => row.split(/\s{2,}/).slice(-2))).toEqual([
      ['false', 'Job 1'],
      ['false', 'Job 1 (rev 1)'],
      ['false', 'Job 1 (rev 2)'],
      ['false', 'Job 2'],
      ['true', 'Job 2'],
    ]);
    expect(versions[2]).toContain('(current)');
    // The summary's last two rows (default's jobs again) are explained right under it.
    const [, changed, dropped] =
      /History: every version of job (\d+) \(changed twice\) and of job (\d+) \(deleted\)/.exec(
        result.stdout,
      ) ?? [];
    expect(result.stdout).toMatch(
      new RegExp(
        `^default\\s+jobs\\s+full\\s.*succeeded\nThe last two runs: default's jobs again, after the API changed job ${changed} and deleted job ${dropped} \\(deleted 1\\)`,
        'm',
      ),
    );
    // A list resource named in HIRESYNC_RESOURCES, stored as sent.
    expect(result.stdout).toMatch(/^default\s+applications\s+full\s+\d+\s/m);
    const statuses = result.stdout.split('applications per status')[1] ?? '';
    // The v3 world's statuses: in_process (prospects among them), rejected, hired, converted.
    expect(statuses).toMatch(/^in_process\s+[1-9]\d*\s+0\.\d\d\s+[1-9]\d*\s+\d{4}-\d\d-\d\d$/m);
    // The analytics views answer from the v3 world: hires by source, and one job's funnel.
    const sources = result.stdout.split('by source:')[1]?.split('\n\n')[1] ?? '';
    const sourceRows = sources.split('\n').slice(2);
    expect(sourceRows.length).toBeGreaterThan(1);
    for (const row of sourceRows) expect(row).toMatch(/\s\d+\s+\d+\s+\d+\s+\d+\s+\d+(\.\d)?$/);
    const pipeline = result.stdout.split('stage by stage:')[1]?.split('\n\n')[1] ?? '';
    const stages = pipeline.split('\n').slice(2);
    expect(stages[0]).toMatch(/^0\s+Application Review\s+[1-9]\d*\s/);
    expect(stages.map((row) => Number(row.split(/\s+/)[0]))).toEqual(
      [...stages].map((row) => Number(row.split(/\s+/)[0])).sort((a, b) => a - b),
    );
    // Privacy: candidates' emails stored as their HMAC, phone numbers never stored.
    const policy = result.stdout.split('phone numbers never stored:')[1]?.split('\n\n')[1] ?? '';
    const candidates = policy.split('\n').slice(2);
    expect(candidates).toHaveLength(3);
    for (const row of candidates)
      expect(row).toMatch(/^\d+\s+\w+\s+hmac-sha256:[0-9a-f]{18}…\s+false$/);
    expect(result.stdout).not.toMatch(/@example\.com/);
    // An erasure: logged without content, nothing of the record left.
    const erasure = result.stdout.split('what is left of the record:')[1]?.split('\n\n')[1] ?? '';
    expect(erasure.split('\n')[2]).toMatch(
      /^\d+\s+1\s+1\s+the demo: a candidate asked to be forgotten\s+0$/,
    );
    expect(result.stdout).toContain(`psql postgres://`);
    expect(result.stdout).toMatch(
      new RegExp(`^The tables are yours to query: psql postgres://.+/${database}$`, 'm'),
    );
  });
});
